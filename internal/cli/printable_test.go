package cli

import "testing"

// TestPrintable checks that what a terminal would act on is shown as text,
// and that everything else is left as it was.
func TestPrintable(t *testing.T) {
	cases := map[string]struct {
		reason, in, want string
	}{
		"Plain":   {reason: "Text, newlines and tabs are left alone.", in: "ERROR: no\tmatch\nné", want: "ERROR: no\tmatch\nné"},
		"OSC52":   {reason: "A clipboard write.", in: "\x1b]52;c;cm0gLXJmIH4=\x07", want: `\x1b]52;c;cm0gLXJmIH4=\a`},
		"Return":  {reason: "A carriage return that would overwrite the line.", in: "ok\rPhase: Ready", want: `ok\rPhase: Ready`},
		"C1":      {reason: "The 8-bit control sequence introducer.", in: "\u009b2J", want: `\u009b2J`},
		"NotUTF8": {reason: "A byte that is not UTF-8.", in: "a\xffb", want: `a\xffb`},
		"Delete":  {reason: "DEL.", in: "a\x7f", want: `a\x7f`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := printable(tc.in); got != tc.want {
				t.Errorf("%s\nprintable(%q) = %q; want %q", tc.reason, tc.in, got, tc.want)
			}
		})
	}
}

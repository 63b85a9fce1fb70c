package cli

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// printable escapes what a terminal would act on in s, as Go quotes it:
// control characters but newline and tab, and bytes that are not UTF-8.
// Build logs, workload logs and condition messages hold what a team's code
// wrote, and whoever reads them, an administrator too, must see it rather
// than have it move the cursor, rewrite a line, retitle the window or write
// to the clipboard (OSC 52).
func printable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, acted) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case acted(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// acted is true for the characters a terminal acts on rather than shows,
// but for the newline and tab a log keeps.
func acted(r rune) bool {
	return r != '\n' && r != '\t' && unicode.IsControl(r)
}

package resident

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
)

func TestPackageOf(t *testing.T) {
	cases := map[string]struct {
		reason string
		symbol string
		want   string
	}{
		"Function":       {reason: "A function is its package's.", symbol: "runtime.main", want: "runtime"},
		"Method":         {reason: "A method's receiver does not end the path.", symbol: "github.com/a/b.(*T).M", want: "github.com/a/b"},
		"DottedModule":   {reason: "Dots before the last slash are the module's host.", symbol: "k8s.io/api/core/v1.(*Pod).DeepCopy", want: "k8s.io/api/core/v1"},
		"EscapedPath":    {reason: "The linker escapes a dot in a path's last element.", symbol: "gopkg.in/yaml%2ev3.(*parser).parse", want: "gopkg.in/yaml%2ev3"},
		"Type":           {reason: "A type descriptor is its type's package's.", symbol: "type:*github.com/a/b.T", want: "github.com/a/b"},
		"Equality":       {reason: "A type's generated equality is its package's.", symbol: "type:.eq.k8s.io/api/core/v1.Pod", want: "k8s.io/api/core/v1"},
		"Itab":           {reason: "An itab is its concrete type's package's.", symbol: "go:itab.*net/http.conn,io.Reader", want: "net/http"},
		"GenericArgs":    {reason: "A type argument's slashes are not the package's.", symbol: "slices.Sort[[]k8s.io/api/core/v1.Pod]", want: "slices"},
		"LinkerMade":     {reason: "A linker-made symbol is named by its kind.", symbol: "go:string.*", want: "go:string"},
		"Marker":         {reason: "A marker of where a table begins owns nothing.", symbol: "runtime.pclntab", want: ""},
		"MainPackage":    {reason: "The main package is main.", symbol: "main.main", want: "main"},
		"NoDotInSymbols": {reason: "A name without a dot is its own.", symbol: "_rt0_amd64_linux", want: "_rt0_amd64_linux"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, packageOf(tc.symbol)); diff != "" {
				t.Errorf("%s\npackageOf(%q): -want, +got:\n%s", tc.reason, tc.symbol, diff)
			}
		})
	}
}

func TestMappingsOf(t *testing.T) {
	maps := filepath.Join(t.TempDir(), "maps")
	content := "00400000-01821000 r-xp 00000000 fe:00 9978047 /opt/fn\n" +
		"01821000-02def000 r--p 01421000 fe:00 9978047 /opt/fn\n" +
		"7f4c0bb60000-7f4c0be00000 rw-p 00000000 00:00 0 \n" +
		"7f4c0be00000-7f4c0be01000 r--p 00000000 fe:00 1 /opt/fn2\n"
	if err := os.WriteFile(maps, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := mappingsOf(maps, "/opt/fn")
	if err != nil {
		t.Fatal(err)
	}
	want := []mapping{{start: 0x400000, end: 0x1821000, offset: 0}, {start: 0x1821000, end: 0x2def000, offset: 0x1421000}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(mapping{})); diff != "" {
		t.Errorf("mappingsOf: only the executable's mappings, -want, +got:\n%s", diff)
	}
}

func TestAttributeSplitsPagesAmongSpans(t *testing.T) {
	spans := []span{
		{start: 0x1000, end: 0x1800, owner: "a"},
		{start: 0x1800, end: 0x2400, owner: ".text"},
		{start: 0x2400, end: 0x3000, owner: "b"},
	}
	got := attribute([]uint64{0x1000, 0x2000}, spans)
	want := []Part{{Name: ".text", Bytes: 0x800 + 0x400}, {Name: "b", Bytes: 0xc00}, {Name: "a", Bytes: 0x800}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attribute: each byte of a resident page once, -want, +got:\n%s", diff)
	}
}

// TestOfARunningProgram reads the resident executable of a program built
// for it, with its symbols, as go build leaves them: its runtime and its main
// ran, so both have pages in memory, and counting by package or by section
// counts the same pages.
func TestOfARunningProgram(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "sleeper")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./testdata/sleeper")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(t.Context(), bin)
	out := process.ForTest(t, "sleeper", cmd)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "ready"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the sleeper did not start")
		}
	}
	byPackage, err := Of(cmd.Process.Pid, Packages)
	if err != nil {
		t.Fatal(err)
	}
	bySection, err := Of(cmd.Process.Pid, Sections)
	if err != nil {
		t.Fatal(err)
	}
	sum := func(parts []Part) (n uint64) {
		for _, p := range parts {
			n += p.Bytes
		}
		return n
	}
	if sum(byPackage) == 0 || sum(byPackage) != sum(bySection) {
		t.Errorf("resident bytes by package %d and by section %d: want the same, not zero", sum(byPackage), sum(bySection))
	}
	has := func(parts []Part, name string) bool {
		return slices.ContainsFunc(parts, func(p Part) bool { return p.Name == name && p.Bytes > 0 })
	}
	for _, name := range []string{"runtime", "main"} {
		if !has(byPackage, name) {
			t.Errorf("no resident bytes of package %s, whose code ran: %v", name, byPackage)
		}
	}
	if !has(bySection, ".text") || has(bySection, "runtime") {
		t.Errorf("by section: want .text and no packages, got %v", bySection)
	}
}

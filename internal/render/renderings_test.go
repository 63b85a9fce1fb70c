package render

import (
	"fmt"
	"strings"
	"testing"
)

// TestRenderingsFollowEveryVariable renders every runtime template with
// each variable changed in turn, after the same template was rendered with
// the variables before the change: a rendering kept for other variables
// would differ from the template's own output.
func TestRenderingsFollowEveryVariable(t *testing.T) {
	rf, err := loaded()
	if err != nil {
		t.Fatal(err)
	}
	base := templateVars{Version: "3.12", Handler: "main.handler", Port: 8080,
		BaseImage: "base.test/python:3.12", RunImage: "run.test/python:3.12", BuildArgs: []string{"A"}}
	changes := map[string]func(v *templateVars){
		"version":                 func(v *templateVars) { v.Version = "3.13" },
		"handler":                 func(v *templateVars) { v.Handler = "app.run" },
		"port":                    func(v *templateVars) { v.Port = 9090 },
		"baseImage":               func(v *templateVars) { v.BaseImage = "base.test/other:1" },
		"runImage":                func(v *templateVars) { v.RunImage = "run.test/other:1" },
		"one more build argument": func(v *templateVars) { v.BuildArgs = []string{"A", "B"} },
		"build arguments split":   func(v *templateVars) { v.BuildArgs = []string{"A", ""} },
	}
	read := map[string]bool{}
	for name, tmpl := range rf.templates {
		if _, err := renderFile(name, base); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for change, fn := range changes {
			v := base
			fn(&v)
			got, err := renderFile(name, v)
			if err != nil {
				t.Fatalf("%s with %s changed: %v", name, change, err)
			}
			var want strings.Builder
			if err := tmpl.Execute(&want, v); err != nil {
				t.Fatal(err)
			}
			if got != want.String() {
				t.Errorf("%s with %s changed: got the rendering of other variables", name, change)
			}
			var before strings.Builder
			if err := tmpl.Execute(&before, base); err != nil {
				t.Fatal(err)
			}
			read[change] = read[change] || before.String() != want.String()
		}
	}
	// A variable no template reads tests nothing here.
	for change := range changes {
		if !read[change] {
			t.Errorf("no runtime template reads what %q changes", change)
		}
	}
}

// TestRenderingsAreBounded keeps at most maxRendered renderings.
func TestRenderingsAreBounded(t *testing.T) {
	r := &renderedFiles{files: map[renderedKey]string{}, quoted: map[string][]byte{}}
	for i := range 3 * maxRendered {
		r.put(renderedKey{name: fmt.Sprint(i)}, fmt.Sprint("text ", i))
		if len(r.files) > maxRendered || len(r.quoted) > maxRendered {
			t.Fatalf("%d renderings and %d quoted kept, want at most %d", len(r.files), len(r.quoted), maxRendered)
		}
	}
	if _, ok := r.get(renderedKey{name: fmt.Sprint(3*maxRendered - 1)}); !ok {
		t.Error("the latest rendering is not kept")
	}
	if _, ok := r.quotedOf(fmt.Sprint("text ", 3*maxRendered-1)); !ok {
		t.Error("the latest rendering is not kept quoted")
	}
}

package process

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestBuildFromAnotherFolder builds a command of a module given by a
// relative path, as the end-to-end test does from its own folder, and finds
// the binary where Build says it is.
func TestBuildFromAnotherFolder(t *testing.T) {
	mod := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.26.0\n",
		"main.go": "package main\n\nfunc main() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, mod)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := Build(context.Background(), rel, "hello", ".")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(mod, ".cache", "bin", "hello"); bin != want {
		t.Errorf("Build: binary at %s, want %s", bin, want)
	}
	p, err := Start("hello", bin, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-p.Exited; err != nil {
		t.Errorf("hello: %v", err)
	}
}

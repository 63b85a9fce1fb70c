package process

import (
	"os/exec"
	"syscall"
	"testing"
)

// ForTest starts a test's program with its output kept, and kills it when
// the test ends, logging that output if the test failed. A test killed
// before its cleanups ran takes the program with it.
func ForTest(t testing.TB, name string, cmd *exec.Cmd) *Output {
	t.Helper()
	out := &Output{}
	cmd.Stdout, cmd.Stderr = out, out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, out.String())
		}
	})
	return out
}

package playact

import (
	"testing"
)

func TestTry(t *testing.T) {
	if err := Try(func(T) {}); err != nil {
		t.Errorf("a play that ends: Try() = %v, want nil", err)
	}
	err := Try(func(t T) {
		t.Fatal("cannot write", " the Job")
		panic("a play goes on after Fatal")
	})
	if err == nil || err.Error() != "cannot write the Job" {
		t.Errorf("a play that fails: Try() = %v, want the words given to Fatal", err)
	}
	defer func() {
		if r := recover(); r != "not a play's failure" {
			t.Errorf("recovered %v, want the panic that was not Fatal's", r)
		}
	}()
	_ = Try(func(T) { panic("not a play's failure") })
	t.Error("a panic other than Fatal's was swallowed")
}

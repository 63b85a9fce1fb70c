package source

import "github.com/crossplane/function-sdk-go/errors"

// An unresolvableError says a source, as specified, cannot be resolved
// however often one tries: its ref, object or prefix does not exist, or its
// URL or endpoint is malformed. A user must change the spec or the source.
// Other errors, such as a server that does not answer, may pass.
type unresolvableError struct{ error }

func (e unresolvableError) Unwrap() error { return e.error }

func unresolvable(err error) error { return unresolvableError{err} }

// IsUnresolvable reports whether an error says a source, as specified,
// cannot be resolved however often one tries.
func IsUnresolvable(err error) bool {
	var u unresolvableError
	return errors.As(err, &u)
}

package main

import "context"

// handle stands in for the handle lambda_build.sh writes beside the wrapper
// in a function's module, which calls the function's handler: with it the
// wrapper compiles, and go vet and the linters read it, here. It is never
// part of a build context. It echoes the event.
func handle(_ context.Context, event map[string]any) (any, error) {
	return event, nil
}

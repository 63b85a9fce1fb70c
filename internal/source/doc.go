// Package source resolves where a function's code is to a content identity,
// without building it: a git ref to the commit it names.
package source

// Package clients connects managed resources to their target cluster: it
// resolves their provider config, reads its credentials, and hands out one
// cached client per credential set.
package clients

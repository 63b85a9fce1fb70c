package apiserver

// Eventing v0.50.0's ApiServerSource adapter implements client-go v0.35's
// cache.Store; the local cluster builds it with the provider's v0.37, whose
// Store also observes the resource version a watch reached. gobuild.sh adds
// this file to the package (go build -overlay). The adapter's stores turn
// changes into events and hold no objects, so they hold no version either,
// as their List holds no items.

// Bookmark ignores the version.
func (a *resourceDelegate) Bookmark(string) {}

// LastStoreSyncResourceVersion holds no version.
func (a *resourceDelegate) LastStoreSyncResourceVersion() string { return "" }

// Bookmark passes the version on.
func (c *controllerFilter) Bookmark(rv string) { c.delegate.Bookmark(rv) }

// LastStoreSyncResourceVersion is the delegate's.
func (c *controllerFilter) LastStoreSyncResourceVersion() string {
	return c.delegate.LastStoreSyncResourceVersion()
}

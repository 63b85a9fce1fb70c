package render

// Sent says whether a client sends a rendered object's top-level field,
// whether the provider applies the object or the function composes it:
// status is the server's, and a client that sends it either has it ignored
// or fights the controller that writes it. Render sets no creationTimestamp
// and both encodings leave a zero one out, so metadata is sent whole.
func Sent(field string) bool {
	return field != "status"
}

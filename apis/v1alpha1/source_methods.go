package v1alpha1

// CredentialsRef is the Secret of a git or S3 source's credentials; nil for
// other sources and for sources without credentials.
func (s FunctionSource) CredentialsRef() *LocalObjectReference {
	switch {
	case s.Git != nil:
		return s.Git.SecretRef
	case s.S3 != nil:
		return s.S3.SecretRef
	}
	return nil
}

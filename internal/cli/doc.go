// Package cli is kubectl-lambda, the kubectl plugin that invokes a
// LambdaFunction, LambdaAgent, Lambda or Agent, reads its logs and its
// build's, shows its status in one screen and asks for a rebuild, through
// the kubeconfig as kubectl reads it.
package cli

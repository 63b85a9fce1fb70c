//go:build tools

// Package knative pins the Knative Serving commands the local
// cluster runs.
package knative

import (
	_ "knative.dev/serving/cmd/activator"
	_ "knative.dev/serving/cmd/autoscaler"
	_ "knative.dev/serving/cmd/controller"
	_ "knative.dev/serving/cmd/queue"
	_ "knative.dev/serving/cmd/webhook"
)

//go:build tools

// Package knative pins the Knative Serving and Eventing commands the local
// cluster runs.
package knative

import (
	_ "knative.dev/eventing/cmd/broker/filter"
	_ "knative.dev/eventing/cmd/broker/ingress"
	_ "knative.dev/eventing/cmd/controller"
	_ "knative.dev/eventing/cmd/in_memory/channel_controller"
	_ "knative.dev/eventing/cmd/in_memory/channel_dispatcher"
	_ "knative.dev/eventing/cmd/mtchannel_broker"
	_ "knative.dev/eventing/cmd/mtping"
	_ "knative.dev/eventing/cmd/webhook"
	_ "knative.dev/serving/cmd/activator"
	_ "knative.dev/serving/cmd/autoscaler"
	_ "knative.dev/serving/cmd/controller"
	_ "knative.dev/serving/cmd/queue"
	_ "knative.dev/serving/cmd/webhook"
)

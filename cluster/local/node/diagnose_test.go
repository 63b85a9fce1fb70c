package node

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// systemNamespaces are the namespaces of the node's own components, whose
// warnings say why a test's call to them failed.
var systemNamespaces = []string{"kube-system", knativeNamespace, eventingNamespace, CrossplaneNamespace}

// reasonKilling is the kubelet's reason for stopping a container, a
// Normal event that says why a component went away.
const reasonKilling = "Killing"

// maxWarnings bounds the warnings diagnose prints per namespace: the last
// ones are those nearest the failure.
const maxWarnings = 20

// diagnose writes what CI's log otherwise lacks when a test failed on the
// shared cluster: each pod whose containers restarted or are not ready, and
// the warnings and kills of the system namespaces. A webhook that refused
// connections for minutes on CI's node left no other trace.
func diagnose(ctx context.Context, w io.Writer, kube client.Client) {
	pods := &corev1.PodList{}
	if err := kube.List(ctx, pods); err != nil {
		_, _ = fmt.Fprintf(w, "diagnose: cannot list pods: %v\n", err)
		return
	}
	for _, p := range pods.Items {
		if s := troubled(p); s != "" {
			_, _ = fmt.Fprintf(w, "pod %s/%s %s:%s\n", p.Namespace, p.Name, p.Status.Phase, s)
		}
	}
	for _, ns := range systemNamespaces {
		events := &corev1.EventList{}
		if err := kube.List(ctx, events, client.InNamespace(ns)); err != nil {
			_, _ = fmt.Fprintf(w, "diagnose: cannot list the events of %s: %v\n", ns, err)
			continue
		}
		warnings := slices.DeleteFunc(events.Items, func(e corev1.Event) bool { return e.Type != corev1.EventTypeWarning && e.Reason != reasonKilling })
		slices.SortFunc(warnings, func(a, b corev1.Event) int { return lastSeen(a).Compare(lastSeen(b)) })
		for _, e := range warnings[max(len(warnings)-maxWarnings, 0):] {
			_, _ = fmt.Fprintf(w, "event %s %s/%s %s (x%d): %s\n", lastSeen(e).Format(time.TimeOnly), ns, e.InvolvedObject.Name, e.Reason, max(e.Count, 1), e.Message)
		}
	}
}

// troubled says how a pod's containers restarted or are not ready, or
// nothing when all run ready.
func troubled(p corev1.Pod) string {
	var b strings.Builder
	for _, c := range p.Status.ContainerStatuses {
		if c.Ready && c.RestartCount == 0 {
			continue
		}
		fmt.Fprintf(&b, " %s ready=%t restarts=%d", c.Name, c.Ready, c.RestartCount)
		if w := c.State.Waiting; w != nil {
			fmt.Fprintf(&b, " waiting=%s", w.Reason)
		}
		if t := c.LastTerminationState.Terminated; t != nil {
			fmt.Fprintf(&b, " last=%s(%d) at %s", t.Reason, t.ExitCode, t.FinishedAt.Format(time.TimeOnly))
		}
	}
	return b.String()
}

// lastSeen is when an event last happened, by whichever field its writer
// set.
func lastSeen(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// Command pause is the local cluster's pod sandbox: it holds a pod's
// namespaces until the kubelet stops it, and reaps the children a shared
// process namespace leaves to it. The kubelet asks containerd for it as
// Kubernetes' own pause image, which cannot be pulled here.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			return
		}
		reap()
	}
}

// reap waits for every child that has exited, and returns as soon as none
// has: one SIGCHLD may stand for several exits, and waiting on a child still
// running would block the sandbox.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err != nil || pid <= 0 {
			return
		}
	}
}

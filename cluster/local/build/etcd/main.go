// Command etcd runs the etcd server, built from its Go module so no binary is
// downloaded from outside the Go module proxy.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}

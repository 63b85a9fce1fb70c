// Command registry is the local cluster's OCI registry: Kaniko pushes
// functions' images to it and containerd pulls them from it, over plain
// HTTP on the node's address, which nothing beyond this machine reaches.
// Blobs are kept on disk; manifests, which are small, in memory.
package main

import (
	"io"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	var (
		app  = kingpin.New("registry", "Serve an OCI registry for the local cluster.")
		addr = app.Flag("address", "host:port to listen on.").Required().String()
		dir  = app.Flag("blobs", "Folder that keeps the blobs.").Required().ExistingDir()
	)
	kingpin.MustParse(app.Parse(os.Args[1:]))
	srv := &http.Server{
		Addr:              *addr,
		Handler:           registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(*dir)), registry.Logger(log.New(io.Discard, "", 0))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	kingpin.FatalIfError(srv.ListenAndServe(), "registry")
}

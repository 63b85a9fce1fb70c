package cli

import (
	"github.com/spf13/cobra"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

func (s *session) initCommand() *cobra.Command {
	var language, version, dir string
	cmd := &cobra.Command{
		Use:   "init NAME --language python|nodejs|go",
		Short: "Write a new function: a handler, its test, and its LambdaFunction and Lambda manifests",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if dir == "" {
				dir = args[0]
			}
			return initFunction(dir, args[0], v1alpha1.Language(language), version, s.streams.Out)
		},
	}
	cmd.Flags().StringVarP(&language, "language", "l", "", "The function's language: python, nodejs or go.")
	cmd.Flags().StringVar(&version, "version", "", "The language's version the function is built for ("+v1alpha1.SupportedVersions+"); the provider's default when not given.")
	cmd.Flags().StringVar(&dir, "dir", "", "The new folder to write into; ./NAME when not given.")
	_ = cmd.MarkFlagRequired("language")
	return cmd
}

func (s *session) runCommand() *cobra.Command {
	o := runOptions{}
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run the function a LambdaFunction or Lambda manifest declares on this machine, with no cluster, until stopped",
		Long: "run serves the function with the wrapper its image would have, started by the language's own\n" +
			"interpreter or toolchain (python3, node, go), on loopback. The code is --dir, else the manifest's\n" +
			"folder when it holds the handler's file (as init writes it), else the manifest's inline code.\n" +
			"Secrets and ConfigMaps that env and envFrom read come from --values files, never from a cluster\n" +
			"unless --from-cluster says so.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.manifest = args[0]
			m, err := readManifest(o.manifest)
			if err != nil {
				return err
			}
			values, err := valuesOf(o.values)
			if err != nil {
				return err
			}
			if o.fromCluster {
				c, _, ns, err := s.clients()
				if err != nil {
					return err
				}
				if m.namespace != "" {
					ns = m.namespace
				}
				values = clusterValues(cmd.Context(), c, ns)
			}
			return runLocal(cmd.Context(), m, o, values, s.streams.Out, s.streams.ErrOut)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "", "The folder of the function's code.")
	f.BoolVar(&o.inline, "inline", false, "Run the manifest's inline code even when its folder holds the handler's file.")
	f.IntVar(&o.port, "port", 8080, "The loopback port to serve on; 0 picks a free one.")
	f.StringArrayVar(&o.values, "values", nil, "A file of Secret and ConfigMap manifests, such as kubectl create secret --dry-run=client -o yaml writes; repeatable.")
	f.BoolVar(&o.fromCluster, "from-cluster", false, "Read the Secrets and ConfigMaps from the current context's namespace instead.")
	cmd.MarkFlagsMutuallyExclusive("values", "from-cluster")
	cmd.MarkFlagsMutuallyExclusive("dir", "inline")
	return cmd
}

package node

import (
	"bytes"
	"context"
	_ "embed"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"golang.org/x/mod/modfile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/kingress"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/manifest"
)

// Knative on the node: Serving and Eventing (the MT channel broker over the
// in-memory channel) of the versions the wrapper module requires, installed
// from the manifests their modules ship, with the images make knative
// assembles from their commands, and kingress as the networking layer.
const (
	// knativeModule is the wrapper module make knative builds from; its
	// versions pick the manifests too, so they match the binaries.
	knativeModule = "cluster/local/build/knative"
	// IngressIP is the public ingress's cluster IP, which the host
	// reaches: curl -H "Host: NAME.NAMESPACE.lambda.local" http://IngressIP.
	IngressIP = "10.96.0.80"
	// Domain is the domain of every Knative Service's URL.
	Domain = "lambda.local"
	// knativeNamespace is where Knative Serving and kingress run.
	knativeNamespace = "knative-serving"
	// eventingNamespace is where Knative Eventing runs.
	eventingNamespace = "knative-eventing"
	// notInstalled stands for the images of the Eventing components the
	// node does not run, which Eventing's controller reads from
	// ConfigMaps its module does not ship.
	notInstalled = "registry.local/knative/not-installed:"
	// kingressRef is the image make knative assembles for kingress.
	kingressRef = "registry.local/knative/kingress:dev"
)

const (
	errFmtKnativeManifests = "cannot read Knative's manifests from %s"
	errKnativeVersions     = "cannot read which Knative modules " + knativeModule + "/go.mod requires"
	errKnativeImages       = "cannot list Knative's image tarballs in %s: run make knative"
	errKnativeDeployments  = "cannot list Knative's Deployments"
)

//go:embed manifests/kingress.yaml
var kingressManifest string

// knativeManifests are the folders of Knative's modules whose manifests the
// node applies: Serving's core, the networking and caching CRDs Serving's
// module links to rather than holds (a module zip drops symlinks), and
// Eventing's core, in-memory channel and MT channel broker.
var knativeManifests = []local.CRDSource{
	{Module: "knative.dev/serving", Dir: "config/core", In: knativeModule},
	{Module: "knative.dev/networking", Dir: "config", In: knativeModule},
	{Module: "knative.dev/caching", Dir: "config", In: knativeModule},
	{Module: "knative.dev/eventing", Dir: "config/core", In: knativeModule},
	{Module: "knative.dev/eventing", Dir: "config/channels/in-memory-channel", In: knativeModule},
	{Module: "knative.dev/eventing", Dir: "config/brokers/mt-channel-broker", In: knativeModule},
}

// knativeSkipped are the manifests the node leaves out: autoscalers that
// need a metrics server, a Certificate only cert-manager would issue, and
// Eventing's JobSink and RequestReply, whose commands make knative does not
// build.
var knativeSkipped = []string{
	"activator-hpa.yaml", "webhook-hpa.yaml", "hpa.yaml", "300-knativecertificate.yaml",
	"job-sink.yaml", "request-reply.yaml",
}

// knativeConfig is what the node sets in Knative's ConfigMaps.
func knativeConfig() map[string]map[string]string {
	return map[string]map[string]string{
		"config-network": {"ingress-class": kingress.Class},
		// registry.local's images are imported into containerd, served
		// by no registry. The node's registry is not skipped: Knative
		// resolves its tags to digests as a user's cluster does, over
		// plain HTTP since its address is private.
		"config-deployment": {"registries-skipping-tag-resolving": "kind.local,ko.local,dev.local,registry.local"},
		"config-domain":     {Domain: ""},
	}
}

// koRef matches the image references Knative's manifests give as ko's
// import paths.
var koRef = regexp.MustCompile(`ko://knative\.dev/([a-z_/]+)`)

// knativeRef is the image of a Knative command, by its path below
// knative.dev, tagged with its module's version: serving/cmd/controller is
// registry.local/knative/serving-controller:v0.50.0. make knative tags each
// tarball so.
func knativeRef(cmd string, versions map[string]string) string {
	name := strings.ReplaceAll(strings.Replace(cmd, "/cmd/", "-", 1), "/", "-")
	module, _, _ := strings.Cut(cmd, "/")
	return "registry.local/knative/" + name + ":" + versions["knative.dev/"+module]
}

// installKnative imports Knative's and kingress's images, installs
// Knative's CRDs, applies its manifests and kingress's, and waits until
// every Deployment of its namespace is available.
func (c *Cluster) installKnative(ctx context.Context, bin string) error {
	tarballs, err := filepath.Glob(filepath.Join(bin, "knative-*.tar"))
	if err != nil || len(tarballs) == 0 {
		return errors.Errorf(errKnativeImages, bin)
	}
	for _, t := range append(tarballs, filepath.Join(bin, "kingress.tar")) {
		if err := c.importImage(ctx, t); err != nil {
			return err
		}
	}
	crds, objs, err := knativeObjects(ctx)
	if err != nil {
		return err
	}
	if err := local.InstallCRDs(c.Config, crds); err != nil {
		return err
	}
	// Webhook configurations last: until Knative's webhooks run, they
	// would refuse the ConfigMaps they validate.
	hooks := func(o *unstructured.Unstructured) bool { return strings.HasSuffix(o.GetKind(), "WebhookConfiguration") }
	first := slices.DeleteFunc(slices.Clone(objs), hooks)
	last := slices.DeleteFunc(objs, func(o *unstructured.Unstructured) bool { return !hooks(o) })
	for _, batch := range [][]*unstructured.Unstructured{first, last} {
		if err := local.Apply(ctx, c.Config, batch); err != nil {
			return err
		}
	}
	return c.knativeAvailable(ctx)
}

// knativeObjects reads Knative's manifests and kingress's, with the node's
// images, configuration and CPU requests, and separates the CRDs.
func knativeObjects(ctx context.Context) ([]*extv1.CustomResourceDefinition, []*unstructured.Unstructured, error) {
	root, err := local.ModuleRoot(ctx, ".")
	if err != nil {
		return nil, nil, err
	}
	versions, err := knativeVersions(root)
	if err != nil {
		return nil, nil, err
	}
	var all []*unstructured.Unstructured
	for _, src := range knativeManifests {
		dir, err := src.Path(ctx, root)
		if err != nil {
			return nil, nil, err
		}
		objs, err := readKnative(dir, versions)
		if err != nil {
			return nil, nil, errors.Wrapf(err, errFmtKnativeManifests, dir)
		}
		all = append(all, objs...)
	}
	ing, err := manifest.Decode([]byte(expand(kingressManifest, map[string]string{
		"KINGRESS_IMAGE": kingressRef,
		"INGRESS_IP":     IngressIP,
		"PUBLIC":         "kingress." + knativeNamespace + ".svc.cluster.local",
		"PRIVATE":        "kingress-internal." + knativeNamespace + ".svc.cluster.local",
	})), "kingress")
	if err != nil {
		return nil, nil, err
	}
	all = patient(lighten(configure(append(all, ing...))))
	return local.SplitCRDs(append(all, placeholders(all)...))
}

// knativeVersions are the versions of the Knative modules the wrapper
// module requires, which make knative tags the images with.
func knativeVersions(root string) (map[string]string, error) {
	file := filepath.Join(root, knativeModule, "go.mod")
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, errors.Wrap(err, errKnativeVersions)
	}
	f, err := modfile.ParseLax(file, b, nil)
	if err != nil {
		return nil, errors.Wrap(err, errKnativeVersions)
	}
	v := map[string]string{}
	for _, r := range f.Require {
		if strings.HasPrefix(r.Mod.Path, "knative.dev/") {
			v[r.Mod.Path] = r.Mod.Version
		}
	}
	return v, nil
}

// readKnative decodes every manifest below dir but the skipped ones, with
// ko's references replaced by the node's images.
func readKnative(dir string, versions map[string]string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" || slices.Contains(knativeSkipped, d.Name()) {
			return err
		}
		b, err := os.ReadFile(path) //nolint:gosec // A path below the module cache's folder.
		if err != nil {
			return err
		}
		b = koRef.ReplaceAllFunc(b, func(m []byte) []byte {
			return []byte(knativeRef(string(koRef.FindSubmatch(m)[1]), versions))
		})
		o, err := manifest.Decode(bytes.TrimSpace(b), path)
		objs = append(objs, o...)
		return err
	})
	return objs, err
}

// configure sets knativeConfig's data in the ConfigMaps Knative ships.
func configure(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	want := knativeConfig()
	for _, o := range objs {
		data, ok := want[o.GetName()]
		if o.GetKind() != "ConfigMap" || !ok {
			continue
		}
		for k, v := range data {
			_ = unstructured.SetNestedField(o.Object, v, "data", k)
		}
	}
	return objs
}

// placeholders are the ConfigMaps that objs' Deployments read keys of and
// objs lack, each key holding an image that names it. Eventing's controller
// reads its integrations' and transformations' images from ConfigMaps that
// its release ships apart from its core, and no container starts while a
// key it names is missing.
func placeholders(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	have := map[types.NamespacedName]bool{}
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" {
			have[types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}] = true
		}
	}
	want := map[types.NamespacedName]map[string]any{}
	for _, o := range objs {
		d := &appsv1.Deployment{}
		if o.GetKind() != "Deployment" || kruntime.DefaultUnstructuredConverter.FromUnstructured(o.Object, d) != nil {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			for _, e := range c.Env {
				if e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil {
					continue
				}
				ref := e.ValueFrom.ConfigMapKeyRef
				key := types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}
				if have[key] {
					continue
				}
				if want[key] == nil {
					want[key] = map[string]any{}
				}
				want[key][ref.Key] = notInstalled + ref.Key
			}
		}
	}
	cms := make([]*unstructured.Unstructured, 0, len(want))
	for key, data := range want {
		cm := &unstructured.Unstructured{}
		cm.SetAPIVersion("v1")
		cm.SetKind("ConfigMap")
		cm.SetNamespace(key.Namespace)
		cm.SetName(key.Name)
		_ = unstructured.SetNestedMap(cm.Object, data, "data")
		cms = append(cms, cm)
	}
	return cms
}

// knativeAvailable waits until every Deployment of Knative's namespaces
// that runs a replica has one available.
func (c *Cluster) knativeAvailable(ctx context.Context) error {
	for _, ns := range []string{knativeNamespace, eventingNamespace} {
		l := &appsv1.DeploymentList{}
		if err := c.kube.List(ctx, l, client.InNamespace(ns)); err != nil {
			return errors.Wrap(err, errKnativeDeployments)
		}
		for _, d := range l.Items {
			if d.Spec.Replicas != nil && *d.Spec.Replicas == 0 {
				continue
			}
			if err := c.available(ctx, "Knative's "+d.Name, client.ObjectKeyFromObject(&d)); err != nil {
				return err
			}
		}
	}
	return nil
}

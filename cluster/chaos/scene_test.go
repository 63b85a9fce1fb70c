package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// root is the module's root, seen from this package.
const root = "../.."

// A provider is the provider's process, restarted after each kill. A
// process that exits on its own is a crash, which the checks report.
type provider struct {
	bin, kubeconfig string
	out             *os.File

	mu      sync.Mutex
	p       *process.Process
	kills   int
	crashes []string
}

// startProvider builds the provider and starts it against kubeconfig, with
// its logs in dir/provider.log.
func startProvider(ctx context.Context, t *testing.T, kubeconfig, dir string) *provider {
	t.Helper()
	bin, err := process.Build(ctx, root, "provider", "./cmd/provider")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "provider.log"))
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{bin: bin, kubeconfig: kubeconfig, out: out}
	if err := p.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.p.Stop()
		_ = out.Close()
	})
	return p
}

func (p *provider) start() error {
	proc, err := process.Start("provider", p.bin, process.Options{Env: []string{"KUBECONFIG=" + p.kubeconfig}, Out: p.out},
		"--poll=30s", "--max-reconcile-rate=50",
		"--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0")
	p.p = proc
	return err
}

// alive notes a crash if the provider exited without being killed.
func (p *provider) alive() {
	select {
	case err := <-p.p.Exited:
		p.crashes = append(p.crashes, fmt.Sprintf("exited on its own: %v", err))
		// Crashed or not, the run goes on with a provider.
		_ = p.start()
	default:
	}
}

// kill kills the provider with SIGKILL and starts it again.
func (p *provider) kill() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.alive()
	if err := p.p.Kill(); err != nil {
		return err
	}
	p.kills++
	return p.start()
}

// check reports crashes so far, and panics in the provider's log.
func (p *provider) check() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.alive()
	found := p.crashes
	if b, err := os.ReadFile(p.out.Name()); err == nil && strings.Contains(string(b), "panic:") {
		found = append(found, "the provider's log has a panic: see "+p.out.Name())
	}
	return found
}

// functionName is the name of the i-th function.
func functionName(i int) string { return fmt.Sprintf("fn-%03d", i) }

// newFunction is the i-th function: even ones build inline code, odd ones
// deploy a prebuilt image; every third uses the namespace's shared Broker,
// which the provider creates and removes with its last user.
func newFunction(ns string, i int) *v1alpha1.LambdaFunction {
	var fn *v1alpha1.LambdaFunction
	if builds(i) {
		fn = testkit.InlineFunction(ns, functionName(i), fmt.Sprintf("def handler(event, context):\n    return %d\n", i))
	} else {
		digest := v1alpha1.ImageDigest("sha256:" + strings.Repeat(fmt.Sprintf("%02x", i%256), 32))
		fn = testkit.ImageFunction(ns, functionName(i))
		fn.Spec.ForProvider.Source.Image = &v1alpha1.ImageSource{Repository: "registry.local:5000/prebuilt/hello", Digest: &digest}
	}
	if i%3 == 0 {
		fn.Spec.ForProvider.Eventing = &v1alpha1.FunctionEventing{
			Broker:   &v1alpha1.Broker{Name: "default", Create: true},
			Triggers: []v1alpha1.Trigger{{Name: "orders", Filters: v1alpha1.Filters{"type": "com.example.order"}}},
		}
	}
	return fn
}

// builds is true for the functions that build an image.
func builds(i int) bool { return i%2 == 0 }

// newProviderConfig is the namespace's ProviderConfig: the provider's own
// cluster, with a registry for builds.
func newProviderConfig(ns string) client.Object {
	registry := v1alpha1.ImageRepository("registry.local:5000/lambdas")
	return &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"},
		Spec: v1alpha1.ProviderConfigSpec{
			Credentials: v1alpha1.ProviderCredentials{Source: v1alpha1.CredentialsSourceInjectedIdentity},
			Build:       &v1alpha1.BuildDefaults{Registry: &registry},
		},
	}
}

// newStage starts a local control plane with every CRD, its data in dir,
// and creates namespace ns with a ProviderConfig named default. It returns
// the control plane, the path of its kubeconfig and an administrator's
// client.
func newStage(ctx context.Context, t *testing.T, dir, ns string) (*local.ControlPlane, string, client.Client) {
	t.Helper()
	cp, err := local.StartWithAllCRDs(ctx, local.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := cp.ForTest(t, dir)
	kube := testkit.Client(t, cp.Config)
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, newProviderConfig(ns)} {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	return cp, kubeconfig, kube
}

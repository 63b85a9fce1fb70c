package local

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	duckv1 "knative.dev/pkg/apis/duck/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	eventingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/eventing/v1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// TestStartWithAllCRDs starts a real control plane and checks that every kind
// the provider, the function and the tests use is served.
func TestStartWithAllCRDs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := StartWithAllCRDs(ctx, Options{})
	if err != nil {
		t.Fatalf("StartWithAllCRDs(...): %v", err)
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("Stop(): %v", err)
		}
	}()

	dc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.GroupVersionKind{
		{Group: "lambda.m.crossplane.io", Version: "v1alpha1", Kind: "LambdaFunction"},
		{Group: "lambda.m.crossplane.io", Version: "v1alpha1", Kind: "LambdaAgent"},
		{Group: "lambda.m.crossplane.io", Version: "v1alpha1", Kind: "ProviderConfig"},
		{Group: "lambda.m.crossplane.io", Version: "v1alpha1", Kind: "ClusterProviderConfig"},
		{Group: "lambda.m.crossplane.io", Version: "v1alpha1", Kind: "ProviderConfigUsage"},
		{Group: "serving.knative.dev", Version: "v1", Kind: "Service"},
		{Group: "serving.knative.dev", Version: "v1", Kind: "Revision"},
		{Group: "eventing.knative.dev", Version: "v1", Kind: "Broker"},
		{Group: "eventing.knative.dev", Version: "v1", Kind: "Trigger"},
		{Group: "eventing.knative.dev", Version: "v1alpha1", Kind: "RabbitmqBrokerConfig"},
		{Group: "apiextensions.crossplane.io", Version: "v2", Kind: "CompositeResourceDefinition"},
		{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "Composition"},
		{Group: "pkg.crossplane.io", Version: "v1", Kind: "Function"},
		{Group: "pkg.crossplane.io", Version: "v1", Kind: "FunctionRevision"},
		{Group: "batch", Version: "v1", Kind: "Job"},
	}
	for _, gvk := range want {
		list, err := dc.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
		if err != nil {
			t.Errorf("%s is not served: %v", gvk.GroupVersion(), err)
			continue
		}
		if !servesKind(list, gvk.Kind) {
			t.Errorf("%s does not serve kind %s", gvk.GroupVersion(), gvk.Kind)
		}
	}

	// Knative's own Go types round-trip through the installed schemas, so the
	// CRDs and the types the render core uses are of the same release.
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, servingv1.AddToScheme, eventingv1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	kube, err := client.New(cp.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "knative-types"}}
	svc := &servingv1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "hello"},
		Spec: servingv1.ServiceSpec{ConfigurationSpec: servingv1.ConfigurationSpec{Template: servingv1.RevisionTemplateSpec{
			Spec: servingv1.RevisionSpec{PodSpec: corev1.PodSpec{Containers: []corev1.Container{{Image: "registry.local/hello@sha256:" + strings.Repeat("a", 64)}}}},
		}}},
	}
	broker := &eventingv1.Broker{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "default"}}
	trigger := &eventingv1.Trigger{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "hello"},
		Spec: eventingv1.TriggerSpec{
			Broker:     broker.Name,
			Filter:     &eventingv1.TriggerFilter{Attributes: eventingv1.TriggerFilterAttributes{"type": "com.example.hello"}},
			Subscriber: duckv1.Destination{Ref: &duckv1.KReference{APIVersion: "serving.knative.dev/v1", Kind: "Service", Name: svc.Name}},
		},
	}
	for _, o := range []client.Object{ns, svc, broker, trigger} {
		if err := kube.Create(ctx, o); err != nil {
			t.Errorf("Create %T %s: %v", o, o.GetName(), err)
		}
	}
	got := &eventingv1.Trigger{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(trigger), got); err != nil {
		t.Fatalf("Get Trigger: %v", err)
	}
	if diff := cmp.Diff(trigger.Spec, got.Spec); diff != "" {
		t.Errorf("Trigger spec after a round trip through the API server: -want, +got:\n%s", diff)
	}
}

func servesKind(l *metav1.APIResourceList, kind string) bool {
	for _, r := range l.APIResources {
		if r.Kind == kind {
			return true
		}
	}
	return false
}

// TestStartRejectsBadInput checks that each bad input fails with a message
// that says what is wrong, and leaves no process running.
func TestStartRejectsBadInput(t *testing.T) {
	bin := linkedBinaries(t)
	taken, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()                           //nolint:errcheck // Closing a listener in a test.
	takenPort := taken.Addr().(*net.TCPAddr).Port //nolint:forcetypeassert // A TCP listener's address.

	// A CRD the API server refuses fails Start after etcd and
	// kube-apiserver are up, which is where leftovers would come from.
	badCRD := &extv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "wrong.example.org"},
		Spec: extv1.CustomResourceDefinitionSpec{
			Group: "example.org",
			Names: extv1.CustomResourceDefinitionNames{Plural: "things", Kind: "Thing"},
			Scope: extv1.NamespaceScoped,
			Versions: []extv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &extv1.CustomResourceValidation{OpenAPIV3Schema: &extv1.JSONSchemaProps{Type: "object"}},
			}},
		},
	}

	cases := map[string]struct {
		reason string
		o      Options
		want   []string
	}{
		"BinariesMissing": {
			reason: "An empty binary folder names the missing binary and how to build it.",
			o:      Options{BinDir: t.TempDir()},
			want:   []string{"cannot find etcd", "make controlplane"},
		},
		"NotExecutable": {
			reason: "A binary without the execute bit is reported as such.",
			o:      Options{BinDir: notExecutable(t)},
			want:   []string{"is not an executable file"},
		},
		"PortTaken": {
			reason: "A port something else listens on is reported before anything starts.",
			o:      Options{BinDir: bin, Port: takenPort},
			want:   []string{"is taken", "127.0.0.1"},
		},
		"PortOutOfRange": {
			reason: "A port that is not a TCP port is refused.",
			o:      Options{BinDir: bin, Port: 70000},
			want:   []string{"port 70000 is not a TCP port"},
		},
		"NoDisk": {
			reason: "Too little free disk for etcd is reported with the amounts.",
			o:      Options{BinDir: bin, MinFreeBytes: 1 << 62},
			want:   []string{"MiB free in", "etcd needs at least"},
		},
		"CRDRefused": {
			reason: "A CRD the API server refuses stops the control plane it started.",
			o:      Options{BinDir: bin, CRDs: []*extv1.CustomResourceDefinition{badCRD}},
			want:   []string{"cannot start the local control plane"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cp, err := Start(ctx, tc.o)
			if err == nil {
				_ = cp.Stop()
				t.Fatalf("\n%s\nStart(...): want error, got none", tc.reason)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("\n%s\nStart(...): error %q does not contain %q", tc.reason, err, w)
				}
			}
			if left := processesFrom(t, bin); len(left) > 0 {
				t.Errorf("\n%s\nStart(...): processes left running from %s: %v", tc.reason, bin, left)
			}
		})
	}
}

// linkedBinaries hard-links the control plane binaries into a folder of the
// test's own, so processes started from it can be told apart from any other.
func linkedBinaries(t *testing.T) string {
	t.Helper()
	src := BinDir()
	if err := checkBinaries(src); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	for _, name := range []string{BinaryEtcd, BinaryKubeAPIServer} {
		if err := os.Link(filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func notExecutable(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{BinaryEtcd, BinaryKubeAPIServer} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("not a program"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// processesFrom lists the running processes whose executable is in dir.
func processesFrom(t *testing.T, dir string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/exe")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, p := range procs {
		exe, err := os.Readlink(p)
		if err != nil {
			continue // Gone, or not ours to read.
		}
		if strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			found = append(found, filepath.Dir(p)+" "+exe)
		}
	}
	return found
}

// envOrphan makes the test binary a process that starts a control plane and
// waits to be killed; TestNoOrphansWhenKilled runs it.
const envOrphan = "LAMBDA_TEST_ORPHAN_BIN_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envOrphan); dir != "" {
		if _, err := Start(context.Background(), Options{BinDir: dir}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("started")
		select {}
	}
	os.Exit(m.Run())
}

// TestNoOrphansWhenKilled starts a control plane in a child process and kills
// that process with SIGKILL, as a test timeout or a panic would end it
// without any cleanup: etcd and kube-apiserver must not outlive it.
func TestNoOrphansWhenKilled(t *testing.T) {
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv (util-linux) is not installed, so the control plane cannot ask the kernel to end it with its parent")
	}
	bin := linkedBinaries(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$") //nolint:noctx // The test ends it, and watches what that does.
	cmd.Env = append(os.Environ(), envOrphan+"="+bin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "started" {
		_ = cmd.Process.Kill()
		t.Fatalf("the child did not start a control plane: %q, %v", line, err)
	}
	if running := processesFrom(t, bin); len(running) != 2 {
		_ = cmd.Process.Kill()
		t.Fatalf("want etcd and kube-apiserver running in the child from %s, found %v", bin, running)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for len(processesFrom(t, bin)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if left := processesFrom(t, bin); len(left) > 0 {
		t.Errorf("processes outlived the killed parent: %v", left)
	}
}

// TestRestart restarts etcd, then kube-apiserver, and checks that the same
// administrator's config still reaches what was written before either.
func TestRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("Stop(): %v", err)
		}
	}()
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kept"}, Data: map[string]string{"k": "v"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name    string
		restart func() error
	}{{"etcd", cp.RestartEtcd}, {"kube-apiserver", cp.RestartAPIServer}} {
		name := r.name
		if err := r.restart(); err != nil {
			t.Fatalf("restart %s: %v", name, err)
		}
		got := &corev1.ConfigMap{}
		// etcd comes back before kube-apiserver notices it is there.
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			return c.Get(ctx, client.ObjectKeyFromObject(cm), got) == nil, nil
		})
		if err != nil || got.Data["k"] != "v" {
			t.Fatalf("after restarting %s: ConfigMap %v, %v; want what was written before", name, got.Data, err)
		}
	}
}

package clients

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/internal/kinds"
	"github.com/knative-lambda/provider-knative-lambda/internal/render"
	"github.com/knative-lambda/provider-knative-lambda/internal/testkit"
)

// maxTrimmed is the most a team's object labelled as a build's may cost the
// provider's cache, in bytes of its JSON form: a build's own metadata fits
// in a fraction of it.
const maxTrimmed = 2 << 10

// TestTeamObjectsDoNotFillTheCache checks issue 57's finding 7 against a real
// API server: a team's ConfigMaps and pods labelled as the provider labels
// its builds cost the provider's cache their metadata, not the MiB each
// may hold, and a team's pod labelled as a function's is not cached at all.
// Before, the ConfigMaps and pods were cached whole.
func TestTeamObjectsDoNotFillTheCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := controlPlane.Config(t)
	kube := testkit.Client(t, cfg)
	ns := testkit.Namespace(ctx, t, kube, "finding7-", "")

	identity := v1alpha1.Group + "/build-identity"
	labelled := func(component string) map[string]string {
		l := map[string]string{
			render.LabelManagedBy: render.ManagedBy, render.LabelComponent: component,
			render.LabelKind: v1alpha1.LambdaFunctionKind, render.LabelResource: "hello",
		}
		// As many labels as the API server takes in one object.
		for i := range 2000 {
			l["team.example.com/l"+strconv.Itoa(i)] = strings.Repeat("v", 63)
		}
		return l
	}
	meta := func(name, component string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Namespace: ns, Name: name, Labels: labelled(component),
			Annotations: map[string]string{"team.example.com/note": strings.Repeat("n", 200<<10), identity: "ffff"},
		}
	}
	big := strings.Repeat("x", 512<<10)
	pod := func(name, component string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: meta(name, component), Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "c", Image: "registry.local/c", Env: []corev1.EnvVar{{Name: "BIG", Value: big}}}},
		}}
	}
	objs := []client.Object{
		&corev1.ConfigMap{ObjectMeta: meta("planted", render.ComponentBuild), Data: map[string]string{"big": big}, BinaryData: map[string][]byte{"bin": []byte(big)}},
		pod("planted", render.ComponentBuild),
		pod("workload", render.ComponentWorkload),
	}
	for _, o := range objs {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	s, err := kinds.TargetScheme()
	if err != nil {
		t.Fatal(err)
	}
	o := TargetCacheOptions()
	o.Scheme = s
	ca, err := cache.New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = ca.Start(ctx) }()
	if !ca.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not start")
	}

	wantLabels := labelled(render.ComponentBuild)
	for k := range wantLabels {
		if strings.HasPrefix(k, "team.example.com/") {
			delete(wantLabels, k)
		}
	}
	for _, c := range []struct {
		name string
		obj  client.Object
	}{
		{name: "ConfigMap", obj: &corev1.ConfigMap{}},
		{name: "pod", obj: &corev1.Pod{}},
	} {
		if err := ca.Get(ctx, client.ObjectKey{Namespace: ns, Name: "planted"}, c.obj); err != nil {
			t.Fatalf("the cache does not hold the team's %s labelled as a build's: %v", c.name, err)
		}
		kept, err := json.Marshal(c.obj)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("a team's %s labelled as a build's: the cache keeps %d bytes of it", c.name, len(kept))
		if len(kept) > maxTrimmed {
			t.Errorf("the cache keeps %d bytes of a team's %s labelled as a build's; want at most %d", len(kept), c.name, maxTrimmed)
		}
		if diff := cmp.Diff(wantLabels, c.obj.GetLabels()); diff != "" {
			t.Errorf("the labels the cache keeps of a team's %s: -want, +got:\n%s", c.name, diff)
		}
		if diff := cmp.Diff(map[string]string{identity: "ffff"}, c.obj.GetAnnotations()); diff != "" {
			t.Errorf("the annotations the cache keeps of a team's %s: -want, +got:\n%s", c.name, diff)
		}
	}
	err = ca.Get(ctx, client.ObjectKey{Namespace: ns, Name: "workload"}, &corev1.Pod{})
	if !kerrors.IsNotFound(err) {
		t.Errorf("Get(a team's pod labelled as a function's) from the cache: want NotFound, got %v", err)
	}
}

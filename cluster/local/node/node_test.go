package node

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knative-lambda/provider-knative-lambda/cluster/local"
)

// helperEnv makes the test binary the helper that starts a cluster and is
// killed.
const helperEnv = "LAMBDA_NODE_HELPER_DIR"

// binDir is where make node and make controlplane put the binaries.
func binDir(t testing.TB) string {
	t.Helper()
	d := local.BinDir()
	if d == "" {
		t.Fatal("no folder for the cluster's binaries: run from the repository, where make test builds them into .cache/bin")
	}
	return d
}

// runPod runs a pod of the sandbox image, the one image every node has,
// and waits until it is Running; it returns the pod as it then is.
func runPod(ctx context.Context, t testing.TB, cfg client.Client, name string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			Containers:                   []corev1.Container{{Name: "pause", Image: pauseRef, ImagePullPolicy: corev1.PullNever}},
		},
	}
	if err := cfg.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		err := cfg.Get(ctx, client.ObjectKeyFromObject(p), p)
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	if err != nil {
		t.Fatalf("pod %s is %s, not Running: %v", name, p.Status.Phase, err)
	}
	return p
}

// TestHelperCluster is not a test: run by TestKilledClusterIsSwept, it
// starts a cluster with a running pod, says so, and waits to be killed.
func TestHelperCluster(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		return
	}
	ctx := context.Background()
	c, err := Start(ctx, Options{BinDir: binDir(t), Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(c.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runPod(ctx, t, kube, "left")
	fmt.Println("ready")
	time.Sleep(10 * time.Minute)
}

// TestKilledClusterIsSwept runs a pod on a real kubelet and containerd,
// kills the program that started the cluster, as a Ctrl-C that cannot
// finish or a CI timeout would, and checks that the next start removes
// what was left (containerd's shims and the pod's processes, the
// containers' mounts, the cgroups) and runs pods again, and that a stop
// leaves nothing.
func TestKilledClusterIsSwept(t *testing.T) {
	stopShared()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := DefaultDir()

	helper := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperCluster$", "-test.v")
	helper.Env = append(os.Environ(), helperEnv+"="+dir)
	helper.Stderr = os.Stderr
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for lines.Scan() && lines.Text() != "ready" {
		t.Log("helper: ", lines.Text())
	}
	if lines.Text() != "ready" {
		_ = helper.Wait()
		t.Fatalf("the helper's cluster never ran a pod; its logs are in %s", filepath.Join(dir, "run", "logs"))
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()

	run := filepath.Join(dir, "run")
	left := members()
	mounts, err := mountsUnder(run)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the killed run left %d processes, %d mounts and %d cgroups", len(left), len(mounts), len(cgroups()))
	if len(left) == 0 || len(mounts) == 0 || len(cgroups()) == 0 {
		t.Fatalf("the killed run left %d processes, %d mounts and %d cgroups: a pod's shim, its containers' mounts and cgroups must outlive it, or this test proves nothing", len(left), len(mounts), len(cgroups()))
	}

	c, err := Start(ctx, Options{BinDir: binDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range left {
		if !gone(pid) {
			t.Errorf("process %d of the killed run outlived the next start", pid)
		}
	}
	kube, err := client.New(c.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := runPod(ctx, t, kube, "again")
	if ip, err := netip.ParseAddr(p.Status.PodIP); err != nil || !netip.MustParsePrefix(podCIDR).Contains(ip) {
		t.Errorf("pod IP %q is not of the pods' network %s", p.Status.PodIP, podCIDR)
	}

	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if m := members(); len(m) > 0 {
		t.Errorf("processes %v of the cluster outlived its stop", m)
	}
	if mounts, _ := mountsUnder(run); len(mounts) > 0 {
		t.Errorf("mounts %v outlived the cluster's stop", mounts)
	}
	if cg := cgroups(); len(cg) > 0 {
		t.Errorf("cgroups %v outlived the cluster's stop", cg)
	}
	for _, p := range []string{netnsPath(), filepath.Join("/sys/class/net", hostLink), run} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s outlived the cluster's stop", p)
		}
	}
}

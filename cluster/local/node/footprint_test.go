package node

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/process"
	"github.com/knative-lambda/provider-knative-lambda/cluster/local/wait"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// restWindow is how long a footprint's CPU is averaged over.
const restWindow = 30 * time.Second

// The pods' cgroups, in the hierarchies of cgroup v1 the kubelet uses here.
var (
	memoryCgroups = filepath.Join(cgroupFS, "memory", cgroupRoot)
	cpuCgroups    = filepath.Join(cgroupFS, "cpuacct", cgroupRoot)
)

// A footprint is the memory and CPU time of a part of the cluster.
type footprint struct {
	// bytes resident: the working set of a cgroup, as the kubelet counts
	// it (usage less inactive file pages), and the RSS of a process.
	bytes uint64
	// cpu seconds so far.
	cpu float64
}

// plus is f and o together.
func (f footprint) plus(o footprint) footprint {
	return footprint{bytes: f.bytes + o.bytes, cpu: f.cpu + o.cpu}
}

// BenchmarkFootprint measures the memory and CPU of the provider's pod, the
// function's pod and the whole local cluster (its processes, containerd's
// shims and every pod) at rest, with 0, 10 and 50 of the seed's functions,
// built once and applied as prebuilt images, each with its Broker's
// Trigger, scaled to zero. Each operation is one window of restWindow:
// memory is read at its end, CPU averaged over it in millicores.
// services counts the Knative Services in the cluster, which the other
// benchmarks' leave behind too.
func BenchmarkFootprint(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	kube := platformClient(ctx, b)
	c := sharedCluster(b)
	idle := platform.seed.DeepCopy()
	idle.Spec.ForProvider.Scaling = &v1alpha1.Scaling{Window: ptr.To(v1alpha1.GoDuration("6s"))}
	built, _ := apply(ctx, b, kube, idle, tenant(ctx, b, kube), configCache)
	prebuilt := idle.DeepCopy()
	prebuilt.Spec.ForProvider.Source = v1alpha1.FunctionSource{Image: &v1alpha1.ImageSource{
		Repository: v1alpha1.ImageRepository(built.repository),
		Digest:     ptr.To(v1alpha1.ImageDigest(built.digest)),
	}}
	for _, n := range []int{0, 10, 50} {
		b.Run(fmt.Sprintf("Functions=%d", n), func(b *testing.B) {
			ns := tenant(ctx, b, kube)
			restingFunctions(ctx, b, kube, prebuilt, ns, n)
			parts := func() [3]footprint {
				return [3]footprint{podFootprint(b, kube, providerName), podFootprint(b, kube, functionName), clusterFootprint(b, c)}
			}
			var sums [3]footprint
			for b.Loop() {
				before := parts()
				time.Sleep(restWindow)
				after := parts()
				for i := range sums {
					sums[i] = sums[i].plus(footprint{bytes: after[i].bytes, cpu: after[i].cpu - before[i].cpu})
				}
			}
			for i, name := range []string{"provider", "function", "cluster"} {
				b.ReportMetric(float64(sums[i].bytes)/float64(b.N)/(1<<20), name+"-MiB")
				b.ReportMetric(sums[i].cpu/float64(b.N)/restWindow.Seconds()*1000, name+"-mcpu")
			}
			svcs := &servingv1.ServiceList{}
			if err := kube.List(ctx, svcs); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(svcs.Items)), "services")
		})
	}
}

// restingFunctions applies n of the prebuilt function in the namespace and
// waits until each is Ready and Knative has scaled every function in the
// cluster to zero.
func restingFunctions(ctx context.Context, b *testing.B, kube client.Client, prebuilt *v1alpha1.LambdaFunction, ns string, n int) {
	b.Helper()
	for i := range n {
		fn := prebuilt.DeepCopy()
		fn.Name, fn.Namespace = fmt.Sprintf("%s-%d", prebuilt.Name, i), ns
		fn.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: configNoCache}
		if err := kube.Create(ctx, fn); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	wait.Until(ctx, b, fmt.Sprintf("%d functions are Ready and at zero", n), func() string {
		fns := &unstructured.UnstructuredList{}
		fns.SetGroupVersionKind(v1alpha1.LambdaFunctionGroupVersionKind.GroupVersion().WithKind(v1alpha1.LambdaFunctionKind + "List"))
		if err := kube.List(ctx, fns, client.InNamespace(ns)); err != nil {
			return err.Error()
		}
		ready := 0
		for _, fn := range fns.Items {
			if phase, _, _ := unstructured.NestedString(fn.Object, "status", "atProvider", "phase"); phase == string(v1alpha1.PhaseReady) {
				ready++
			}
		}
		pods := &corev1.PodList{}
		if err := kube.List(ctx, pods, client.HasLabels{labelService}); err != nil {
			return err.Error()
		}
		if ready < n || len(pods.Items) > 0 {
			return fmt.Sprintf("%d of %d Ready, %d pods", ready, n, len(pods.Items))
		}
		return ""
	})
}

// podFootprint is the footprint of the running pod in CrossplaneNamespace
// whose name starts with prefix, the package manager's name for the
// provider's or the function's package.
func podFootprint(b *testing.B, kube client.Client, prefix string) footprint {
	b.Helper()
	pods := &corev1.PodList{}
	if err := kube.List(context.Background(), pods, client.InNamespace(CrossplaneNamespace)); err != nil {
		b.Fatal(err)
	}
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, prefix) && p.Status.Phase == corev1.PodRunning {
			return cgroupFootprint(b, podCgroup(b, p.UID))
		}
	}
	b.Fatalf("no running pod %s-* in %s", prefix, CrossplaneNamespace)
	return footprint{}
}

// podCgroup is the path of a pod's cgroup under the kubelet's root: the
// kubelet names it for the pod's UID, under its QoS class.
func podCgroup(b *testing.B, uid types.UID) string {
	b.Helper()
	var found string
	err := filepath.WalkDir(memoryCgroups, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "pod"+string(uid) {
			found = path
			return filepath.SkipAll
		}
		return err
	})
	if err != nil || found == "" {
		b.Fatalf("no cgroup of pod %s under %s: %v", uid, memoryCgroups, err)
	}
	rel, _ := filepath.Rel(memoryCgroups, found)
	return rel
}

// cgroupFootprint reads the working set and CPU time of the cgroup at rel
// under the kubelet's root.
func cgroupFootprint(b *testing.B, rel string) footprint {
	b.Helper()
	usage := readUint(b, filepath.Join(memoryCgroups, rel, "memory.usage_in_bytes"))
	inactive := statField(b, filepath.Join(memoryCgroups, rel, "memory.stat"), "total_inactive_file")
	cpu := readUint(b, filepath.Join(cpuCgroups, rel, "cpuacct.usage"))
	return footprint{bytes: usage - min(usage, inactive), cpu: float64(cpu) / 1e9}
}

// clusterFootprint is the footprint of the whole cluster: its processes'
// RSS and CPU time, containerd's shims', and every pod's cgroup.
func clusterFootprint(b *testing.B, c *Cluster) footprint {
	b.Helper()
	sum := cgroupFootprint(b, ".")
	pids := shimPids(b)
	for _, p := range c.procs {
		pids = append(pids, p.Pid())
	}
	for _, pid := range pids {
		u, err := process.ReadUsage(pid)
		if err != nil {
			b.Fatal(err)
		}
		sum = sum.plus(footprint{bytes: u.RSS, cpu: u.CPUSeconds})
	}
	return sum
}

// shimPids are the containerd shims of the machine, which run outside the
// pods' cgroups; one cluster runs on a machine at a time.
func shimPids(b *testing.B) []int {
	b.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm")); err == nil && bytes.HasPrefix(comm, []byte("containerd-shim")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// readUint reads a file holding one number.
func readUint(b *testing.B, path string) uint64 {
	b.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	return n
}

// statField reads one field of a cgroup's memory.stat.
func statField(b *testing.B, path, field string) uint64 {
	b.Helper()
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // Only read.
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if k, v, _ := strings.Cut(lines.Text(), " "); k == field {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				b.Fatalf("%s: %v", path, err)
			}
			return n
		}
	}
	b.Fatalf("%s has no %s", path, field)
	return 0
}

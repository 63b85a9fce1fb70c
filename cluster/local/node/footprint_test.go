package node

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
// memory is read at its end, CPU averaged over it in millicores. It logs
// each part of the cluster, the busiest first; services counts the Knative
// Services in the cluster, which the other benchmarks leave behind too.
func BenchmarkFootprint(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	kube := platformClient(ctx, b)
	c := sharedCluster(b)
	idle := platform.seed.DeepCopy()
	idle.Spec.ForProvider.Scaling = &v1alpha1.Scaling{Window: ptr.To(v1alpha1.GoDuration("6s"))}
	built, _ := apply(ctx, b, kube, idle, tenant(ctx, b, kube), configCache)
	prebuilt := built.prebuilt(idle)
	for _, n := range []int{0, 10, 50} {
		b.Run(fmt.Sprintf("Functions=%d", n), func(b *testing.B) {
			ns := tenant(ctx, b, kube)
			restingFunctions(ctx, b, kube, prebuilt, ns, n)
			var sum map[string]footprint
			for b.Loop() {
				before := clusterParts(b, c, kube)
				time.Sleep(restWindow)
				sum = added(sum, since(clusterParts(b, c, kube), before))
			}
			var cluster footprint
			for _, f := range sum {
				cluster = cluster.plus(f)
			}
			sum["cluster"] = cluster
			for _, name := range []string{"provider", "function", "cluster"} {
				b.ReportMetric(float64(sum[name].bytes)/float64(b.N)/(1<<20), name+"-MiB")
				b.ReportMetric(sum[name].cpu/float64(b.N)/restWindow.Seconds()*1000, name+"-mcpu")
			}
			for _, name := range slices.SortedFunc(maps.Keys(sum), func(x, y string) int { return cmp.Compare(sum[y].cpu, sum[x].cpu) }) {
				b.Logf("%-28s %7.1f MiB %7.1f mcpu", name, float64(sum[name].bytes)/float64(b.N)/(1<<20), sum[name].cpu/float64(b.N)/restWindow.Seconds()*1000)
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

// clusterParts is the footprint of each part of the cluster, its CPU
// time so far: each of its processes by name, containerd's shims together,
// the provider's and the function's pods, and the other pods of each
// namespace together.
func clusterParts(b *testing.B, c *Cluster, kube client.Client) map[string]footprint {
	b.Helper()
	parts := map[string]footprint{}
	add := func(name string, f footprint) { parts[name] = parts[name].plus(f) }
	for _, p := range c.procs {
		add(p.Name, processFootprint(b, p.Pid()))
	}
	for _, pid := range shimPids(b) {
		add("containerd shims", processFootprint(b, pid))
	}
	cgroups := podCgroups(b)
	pods := &corev1.PodList{}
	if err := kube.List(context.Background(), pods); err != nil {
		b.Fatal(err)
	}
	for _, p := range pods.Items {
		rel, ok := cgroups[p.UID]
		if !ok {
			continue
		}
		name := "pods in " + p.Namespace
		switch {
		case p.Namespace != CrossplaneNamespace:
		case strings.HasPrefix(p.Name, providerName):
			name = "provider"
		case strings.HasPrefix(p.Name, functionName):
			name = "function"
		}
		add(name, cgroupFootprint(b, rel))
	}
	return parts
}

// since is each part's footprint now, with the CPU it took since before.
func since(now, before map[string]footprint) map[string]footprint {
	out := map[string]footprint{}
	for name, f := range now {
		out[name] = footprint{bytes: f.bytes, cpu: f.cpu - before[name].cpu}
	}
	return out
}

// added adds each part of f to sum's.
func added(sum, f map[string]footprint) map[string]footprint {
	if sum == nil {
		sum = map[string]footprint{}
	}
	for name, v := range f {
		sum[name] = sum[name].plus(v)
	}
	return sum
}

// processFootprint is a process's RSS and CPU time.
func processFootprint(b *testing.B, pid int) footprint {
	b.Helper()
	u, err := process.ReadUsage(pid)
	if err != nil {
		b.Fatal(err)
	}
	return footprint{bytes: u.RSS, cpu: u.CPUSeconds}
}

// podCgroups are the paths of the pods' cgroups under the kubelet's root,
// by pod UID: the kubelet names each for its pod, under its QoS class.
func podCgroups(b *testing.B) map[types.UID]string {
	b.Helper()
	found := map[types.UID]string{}
	err := filepath.WalkDir(memoryCgroups, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if uid, ok := strings.CutPrefix(d.Name(), "pod"); ok {
			rel, _ := filepath.Rel(memoryCgroups, path)
			found[types.UID(uid)] = rel
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return found
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

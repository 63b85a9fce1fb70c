package render

import (
	"cmp"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
	servingv1 "github.com/knative-lambda/provider-knative-lambda/internal/knative/serving/v1"
)

// Knative autoscaling annotations of a revision template.
const (
	annotationMinScale       = "autoscaling.knative.dev/min-scale"
	annotationMaxScale       = "autoscaling.knative.dev/max-scale"
	annotationTarget         = "autoscaling.knative.dev/target"
	annotationMetric         = "autoscaling.knative.dev/metric"
	annotationClass          = "autoscaling.knative.dev/class"
	annotationScaleRetention = "autoscaling.knative.dev/scale-to-zero-pod-retention-period"
	annotationWindow         = "autoscaling.knative.dev/window"

	classKPA = "kpa.autoscaling.knative.dev"
	classHPA = "hpa.autoscaling.knative.dev"
)

// Paths every wrapper serves.
const (
	PathHealth = "/health"
	PathReady  = "/ready"
)

// A workload is what the Service of a function or an agent is made of.
type workload struct {
	kind, namespace, name string
	// resource and component label the Service: the workload's own name
	// and ComponentWorkload when empty.
	resource, component string
	container           string
	image               string
	port                int32
	command, args       []string
	env                 []corev1.EnvVar
	envFrom             []v1alpha1.EnvFromSource
	volumes             []v1alpha1.Volume
	scaling             *v1alpha1.Scaling
	resources           *v1alpha1.Resources
	timeoutSeconds      *int64
	serviceAccountName  *v1alpha1.DNSSubdomain
	pullSecrets         []v1alpha1.LocalObjectReference
	meta                *v1alpha1.WorkloadSettings
	route               route
	// readiness is how Knative tells the container is ready.
	readiness corev1.ProbeHandler
}

// httpPath probes that a container answers 2xx on a path.
func httpPath(path string, port int32) corev1.ProbeHandler {
	return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}}
}

// openPort probes that a container accepts connections: all render can
// know of a prebuilt image it did not write.
func openPort(port int32) corev1.ProbeHandler {
	return corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}}
}

// service renders the Knative Service of a workload.
func (w workload) service() *servingv1.Service {
	lbls := labels(w.kind, cmp.Or(w.resource, w.name), cmp.Or(w.component, ComponentWorkload))
	var annotations map[string]string
	podAnnotations := autoscaling(w.scaling)
	if w.meta != nil {
		// Selection labels win: a user label cannot hide the object.
		lbls = mergeUnder(w.meta.Labels, lbls)
		annotations = maps.Clone(w.meta.Annotations)
		// Mesh injection and scrape annotations act on pods, which
		// Knative makes from the revision template. The schema reserves
		// Knative's keys, so the typed scaling fields cannot be overridden.
		if len(annotations) > 0 {
			podAnnotations = mergeUnder(annotations, podAnnotations)
		}
	}
	vols, mounts := volumes(w.volumes)
	spec := corev1.PodSpec{
		Containers: []corev1.Container{{
			Name:            w.container,
			Image:           w.image,
			Command:         w.command,
			Args:            w.args,
			Ports:           []corev1.ContainerPort{{Name: "http1", ContainerPort: w.port}},
			Env:             w.env,
			EnvFrom:         envFrom(w.envFrom),
			VolumeMounts:    mounts,
			Resources:       resources(w.resources),
			ReadinessProbe:  &corev1.Probe{ProbeHandler: w.readiness},
			SecurityContext: restrictedContainer(),
		}},
		Volumes:                      vols,
		AutomountServiceAccountToken: ptr.To(false),
	}
	if w.serviceAccountName != nil {
		spec.ServiceAccountName = string(*w.serviceAccountName)
	}
	for _, s := range w.pullSecrets {
		spec.ImagePullSecrets = append(spec.ImagePullSecrets, corev1.LocalObjectReference{Name: string(s.Name)})
	}
	rs := servingv1.RevisionSpec{PodSpec: spec, TimeoutSeconds: w.timeoutSeconds}
	if w.scaling != nil {
		rs.ContainerConcurrency = w.scaling.ContainerConcurrency
	}
	template := servingv1.RevisionTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(lbls), Annotations: podAnnotations}, Spec: rs}
	if w.meta != nil && ptr.Deref(w.meta.Visibility, v1alpha1.VisibilityPublic) == v1alpha1.VisibilityClusterLocal {
		// Knative reads it from the Service's labels, which its Route
		// gets; it means nothing on a revision.
		lbls[servingv1.VisibilityLabelKey] = servingv1.VisibilityClusterLocal
	}
	if len(w.route.annotations) > 0 {
		// Knative reads the rollout's pace from the Service, not its pods.
		annotations = mergeUnder(annotations, w.route.annotations)
	}
	return &servingv1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: servingAPIVersion, Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: w.namespace, Name: w.name, Labels: lbls, Annotations: annotations},
		Spec: servingv1.ServiceSpec{
			ConfigurationSpec: servingv1.ConfigurationSpec{Template: template},
			RouteSpec:         servingv1.RouteSpec{Traffic: w.route.targets},
		},
	}
}

// restrictedContainer is a container security context that passes the
// restricted Pod Security level. Knative only accepts these fields on the
// container, not the pod, unless its podspec-securitycontext flag is on.
func restrictedContainer() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// autoscaling renders Knative's autoscaling annotations.
func autoscaling(s *v1alpha1.Scaling) map[string]string {
	if s == nil {
		return nil
	}
	a := map[string]string{}
	if s.MinReplicas != nil {
		a[annotationMinScale] = strconv.Itoa(int(*s.MinReplicas))
	}
	if s.MaxReplicas != nil {
		a[annotationMaxScale] = strconv.Itoa(int(*s.MaxReplicas))
	}
	if s.TargetConcurrency != nil {
		a[annotationTarget] = strconv.Itoa(int(*s.TargetConcurrency))
	}
	if s.ScaleToZeroGracePeriod != nil {
		a[annotationScaleRetention] = string(*s.ScaleToZeroGracePeriod)
	}
	if s.Window != nil {
		a[annotationWindow] = string(*s.Window)
	}
	if s.Metric != "" {
		a[annotationMetric] = string(s.Metric)
		a[annotationClass] = classKPA
		if s.Metric == v1alpha1.MetricCPU || s.Metric == v1alpha1.MetricMemory {
			a[annotationClass] = classHPA
		}
	}
	if len(a) == 0 {
		return nil
	}
	return a
}

// resources converts the spec's resources.
func resources(r *v1alpha1.Resources) corev1.ResourceRequirements {
	if r == nil {
		return corev1.ResourceRequirements{}
	}
	out := corev1.ResourceRequirements{}
	if len(r.Requests) > 0 {
		out.Requests = corev1.ResourceList(maps.Clone(r.Requests))
	}
	if len(r.Limits) > 0 {
		out.Limits = corev1.ResourceList(maps.Clone(r.Limits))
	}
	return out
}

// env converts the spec's environment variables, after the ones render sets,
// which they may not override.
func env(set []corev1.EnvVar, user []v1alpha1.EnvVar) []corev1.EnvVar {
	out := append([]corev1.EnvVar(nil), set...)
	taken := map[string]bool{}
	for _, e := range set {
		taken[e.Name] = true
	}
	for _, e := range user {
		if taken[e.Name] {
			continue
		}
		v := corev1.EnvVar{Name: e.Name}
		if e.Value != nil {
			v.Value = *e.Value
		}
		if f := e.ValueFrom; f != nil {
			v.ValueFrom = &corev1.EnvVarSource{}
			if r := f.SecretKeyRef; r != nil {
				v.ValueFrom.SecretKeyRef = &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Key: r.Key, Optional: r.Optional}
			}
			if r := f.ConfigMapKeyRef; r != nil {
				v.ValueFrom.ConfigMapKeyRef = &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: r.Name}, Key: r.Key, Optional: r.Optional}
			}
		}
		out = append(out, v)
	}
	return out
}

// mergeUnder returns extra with base's entries on top.
func mergeUnder(extra, base map[string]string) map[string]string {
	out := maps.Clone(extra)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, base)
	return out
}

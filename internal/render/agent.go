package render

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/knative-lambda/provider-knative-lambda/apis/v1alpha1"
)

// Environment variables an agent gets. The OLLAMA_, EMIT_EVENTS and
// MAX_CONTEXT_MESSAGES names are the ones agent images already read; the AI_
// names are provider-neutral.
const (
	EnvAIProvider         = "AI_PROVIDER"
	EnvAIEndpoint         = "AI_ENDPOINT"
	EnvAIModel            = "AI_MODEL"
	EnvAITemperature      = "AI_TEMPERATURE"
	EnvAIMaxTokens        = "AI_MAX_TOKENS"
	EnvAISystemPrompt     = "AI_SYSTEM_PROMPT"
	EnvAIAPIKey           = "AI_API_KEY"
	EnvOllamaURL          = "OLLAMA_URL"
	EnvOllamaModel        = "OLLAMA_MODEL"
	EnvEmitEvents         = "EMIT_EVENTS"
	EnvMaxContextMessages = "MAX_CONTEXT_MESSAGES"
	EnvOTLPEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvMetricsEnabled     = "METRICS_ENABLED"
	EnvSink               = "K_SINK"
)

// ForwardTargetKey is the key of Observed.ForwardAddresses and
// Observed.Refused for a target: "agent/<name>", "agent/<namespace>/<name>"
// for an agent of another namespace, or "broker/<name>".
func ForwardTargetKey(t v1alpha1.ForwardTarget) string {
	switch {
	case t.Agent != nil && t.Namespace != nil:
		return "agent/" + string(*t.Namespace) + "/" + string(*t.Agent)
	case t.Agent != nil:
		return "agent/" + string(*t.Agent)
	}
	return "broker/" + string(ptr.Deref(t.Broker, ""))
}

// A BrokerRef names a Broker an agent sends events to.
type BrokerRef struct {
	Namespace, Name string
}

// A LookupAgentFn finds the eventing spec of a forward's target agent.
// found is false when the agent does not exist.
type LookupAgentFn func(namespace, name string) (e *v1alpha1.AgentEventing, found bool, err error)

// ForwardTargets are the Brokers an agent sends events to, and the forward
// targets it may not send to.
type ForwardTargets struct {
	// Brokers behind every address an agent sends events to, keyed as
	// Observed.ForwardAddresses: its own, for replies, and each forward's
	// target that exists and accepts it.
	Brokers map[string]BrokerRef

	// Refused says, keyed as Observed.Refused, why a target agent of another
	// namespace takes nothing from this one.
	Refused map[string]string
}

const (
	fmtRefused   = "agent %s/%s does not exist or does not accept events from namespace %s: its eventing.acceptFrom must name it"
	fmtOwnBroker = "forward %s sends events into Broker %s, which the agent listens on: each event it forwards would reach the forward again, and two such forwards double every event at each pass"
	fmtPingPong  = "forward %s sends events to agent %s, whose forward %s sends the same events back into Broker %s, which this agent listens on: they would go back and forth without end"
)

// BrokerTargets resolves the Brokers an agent of the namespace sends events
// to. A target agent that does not exist has no Broker yet; its forward
// waits. One in another namespace must accept the agent's namespace in its
// acceptFrom, or it is refused; a missing one is refused alike, so a
// forward cannot tell which agents another namespace has. A forward into
// the Broker the agent listens on is refused, and so is one to an agent of
// the namespace that forwards the same events back into it: each would
// deliver events through the shared data plane without end.
func BrokerTargets(namespace, name string, e *v1alpha1.AgentEventing, lookup LookupAgentFn) (ForwardTargets, error) {
	out := ForwardTargets{}
	if e == nil {
		return out, nil
	}
	own := BrokerRef{Namespace: namespace, Name: BrokerName(e.Broker)}
	out.Brokers = map[string]BrokerRef{"broker/" + own.Name: own}
	refuse := func(key, why string) {
		if out.Refused == nil {
			out.Refused = map[string]string{}
		}
		out.Refused[key] = why
	}
	for _, f := range e.Forwards {
		key := ForwardTargetKey(f.Target)
		ref := BrokerRef{Namespace: namespace, Name: string(ptr.Deref(f.Target.Broker, ""))}
		var target *v1alpha1.AgentEventing
		if a := f.Target.Agent; a != nil {
			ref.Namespace = cmp.Or(string(ptr.Deref(f.Target.Namespace, "")), namespace)
			if ref.Namespace == namespace && string(*a) == name {
				// The agent itself, whether or not lookup finds it yet.
				ref.Name = own.Name
			} else {
				found, ok, err := lookup(ref.Namespace, string(*a))
				if err != nil {
					return ForwardTargets{}, err
				}
				if ref.Namespace != namespace && (!ok || !slices.Contains(found.GetAcceptFrom(), v1alpha1.DNSLabel(namespace))) {
					refuse(key, fmt.Sprintf(fmtRefused, ref.Namespace, *a, namespace))
					continue
				}
				if !ok {
					continue
				}
				target, ref.Name = found, BrokerName(found.GetBroker())
			}
		}
		switch back, loops := backInto(f, target, namespace, name, own.Name); {
		case ref == own:
			refuse(key, fmt.Sprintf(fmtOwnBroker, f.Name, own.Name))
		case ref.Namespace == namespace && loops:
			refuse(key, fmt.Sprintf(fmtPingPong, f.Name, *f.Target.Agent, back, own.Name))
		default:
			out.Brokers[key] = ref
		}
	}
	return out, nil
}

// backInto names the forward of target, an agent of namespace, that sends
// events f forwards back into Broker broker, where agent name listens.
func backInto(f v1alpha1.Forward, target *v1alpha1.AgentEventing, namespace, name, broker string) (v1alpha1.DNSLabel, bool) {
	for _, g := range target.GetForwards() {
		t := g.Target
		if ns := ptr.Deref(t.Namespace, ""); ns != "" && string(ns) != namespace {
			continue
		}
		intoOwn := (t.Broker != nil && string(*t.Broker) == broker) || (t.Agent != nil && string(*t.Agent) == name)
		if intoOwn && overlaps(f.EventTypes, g.EventTypes) && overlaps(f.Intents, g.Intents) {
			return g.Name, true
		}
	}
	return "", false
}

// overlaps is true when some value passes both selectors; a selector that
// names nothing passes every value.
func overlaps[T comparable](a, b []T) bool {
	return len(a) == 0 || len(b) == 0 || slices.ContainsFunc(a, func(v T) bool { return slices.Contains(b, v) })
}

// Agent renders the objects of a LambdaAgent. Agents are kept warm: one
// replica at least, unless the spec says otherwise.
func Agent(in AgentInput) (*Objects, error) {
	return AgentEncoded(in, nil)
}

// AgentEncoded renders the objects of a LambdaAgent and lends each one's
// JSON to lend.
func AgentEncoded(in AgentInput, lend EncodedFn) (*Objects, error) {
	out, err := agent(in)
	return stamped(out, err, lend)
}

func agent(in AgentInput) (*Objects, error) {
	spec := in.Spec
	routes, err := routing(in.Name, spec.Traffic)
	if err != nil {
		return nil, err
	}
	out := &Objects{Image: imageRef(spec.Image.Repository, spec.Image.Tag, spec.Image.Digest)}
	var eventing v1alpha1.AgentEventing
	if spec.Eventing != nil {
		eventing = *spec.Eventing
	}
	brokerName := BrokerName(eventing.Broker)

	scaling := &v1alpha1.Scaling{}
	if spec.Scaling != nil {
		scaling = spec.Scaling.DeepCopy()
	}
	if scaling.MinReplicas == nil {
		scaling.MinReplicas = ptr.To[int32](1)
	}
	port := spec.Image.Port
	if port == 0 {
		port = DefaultPort
	}
	set := aiEnv(spec.AI)
	if eventing.EmitEvents != nil {
		set = append(set, corev1.EnvVar{Name: EnvEmitEvents, Value: strconv.FormatBool(*eventing.EmitEvents)})
		if addr := in.Observed.ForwardAddresses["broker/"+brokerName]; *eventing.EmitEvents && addr != "" {
			set = append(set, corev1.EnvVar{Name: EnvSink, Value: addr})
		}
	}
	if o := spec.Observability; o != nil {
		if o.Metrics != nil {
			set = append(set, corev1.EnvVar{Name: EnvMetricsEnabled, Value: strconv.FormatBool(*o.Metrics)})
		}
		if o.TracingEndpoint != nil {
			set = append(set, corev1.EnvVar{Name: EnvOTLPEndpoint, Value: string(*o.TracingEndpoint)})
		}
	}
	readiness := openPort(port)
	if spec.Image.ReadinessPath != nil {
		readiness = httpPath(string(*spec.Image.ReadinessPath), port)
	}
	out.Service = workload{
		kind: v1alpha1.LambdaAgentKind, namespace: in.Namespace, name: in.Name,
		container: ContainerAgent, image: out.Image, port: port, readiness: readiness,
		command: spec.Image.Command, args: spec.Image.Args,
		env: env(set, spec.Env), envFrom: spec.EnvFrom, volumes: spec.Volumes,
		scaling: scaling, resources: spec.Resources, timeoutSeconds: spec.TimeoutSeconds,
		serviceAccountName: spec.ServiceAccountName, pullSecrets: spec.Image.PullSecrets, meta: spec.Workload,
		route: routes,
	}.service()
	out.Broker, out.BrokerConfig = broker(v1alpha1.LambdaAgentKind, in.Namespace, in.Name, eventing.Broker)

	for _, s := range eventing.Subscriptions {
		filters := map[string]string{"type": s.EventType}
		if s.Source != nil {
			filters["source"] = *s.Source
		}
		for k, v := range s.Filters {
			if _, set := filters[k]; !set {
				filters[k] = v
			}
		}
		sub := subscription{name: string(s.Name), key: "subscription/" + string(s.Name), filters: filters, delivery: s.Delivery, parallelism: s.Parallelism}
		out.Triggers = append(out.Triggers, trigger(v1alpha1.LambdaAgentKind, in.Namespace, in.Name, brokerName, sub, eventing.Delivery, in.Defaults, serviceSubscriber(in.Name)))
	}
	for _, i := range eventing.Intents {
		sub := subscription{name: "intent-" + string(i), key: "intent/" + string(i), filters: map[string]string{ExtensionIntent: string(i)}}
		out.Triggers = append(out.Triggers, trigger(v1alpha1.LambdaAgentKind, in.Namespace, in.Name, brokerName, sub, eventing.Delivery, in.Defaults, serviceSubscriber(in.Name)))
	}
	r := relayed{namespace: in.Namespace, name: in.Name, targets: map[string]string{}, d: in.Defaults}
	for _, f := range eventing.Forwards {
		if why, ok := in.Observed.Refused[ForwardTargetKey(f.Target)]; ok {
			out.Refused = append(out.Refused, "forward "+string(f.Name)+": "+why)
			continue
		}
		target, waiting := brokerAddress(string(f.Name), ForwardTargetKey(f.Target), in.Observed)
		if waiting != "" {
			out.Pending = append(out.Pending, waiting)
			continue
		}
		r.targets[string(f.Name)] = target
		for _, sub := range forwardSubscriptions(f) {
			// A relay would drop the event; the Broker need not deliver it.
			sub.not = map[string]string{ExtensionHops: strconv.Itoa(int(maxHops(in.Defaults)))}
			out.Triggers = append(out.Triggers, trigger(v1alpha1.LambdaAgentKind, in.Namespace, in.Name, brokerName, sub, eventing.Delivery, in.Defaults, r.subscriber(string(f.Name))))
		}
	}
	if len(r.targets) > 0 {
		out.Relay = r.service()
	}
	served(out.Triggers, in.Name, in.Observed)
	return out, nil
}

// ExtensionIntent is the CloudEvents extension attribute agents route on.
const ExtensionIntent = "intent"

// forwardSubscriptions are the Triggers' subscriptions of a forward: one
// per event type, per intent, or per pair of both, so an event matches one
// Trigger of the forward at most and is forwarded once. A forward by type
// alone keeps the names it has always had.
func forwardSubscriptions(f v1alpha1.Forward) []subscription {
	var out []subscription
	add := func(key string, filters map[string]string) {
		i := strconv.Itoa(len(out))
		out = append(out, subscription{name: string(f.Name) + "-" + i, key: "forward/" + string(f.Name) + "/" + key, filters: filters})
	}
	switch {
	case len(f.Intents) == 0:
		for i, t := range f.EventTypes {
			add(strconv.Itoa(i), map[string]string{"type": t})
		}
	case len(f.EventTypes) == 0:
		for _, in := range f.Intents {
			add("intent/"+string(in), map[string]string{ExtensionIntent: string(in)})
		}
	default:
		for _, t := range f.EventTypes {
			for _, in := range f.Intents {
				add("type/"+t+"/intent/"+string(in), map[string]string{"type": t, ExtensionIntent: string(in)})
			}
		}
	}
	return out
}

// aiEnv renders the LLM settings as the environment agent images read.
func aiEnv(ai v1alpha1.AI) []corev1.EnvVar {
	e := []corev1.EnvVar{
		{Name: EnvAIProvider, Value: string(ai.Provider)},
		{Name: EnvAIModel, Value: ai.Model},
	}
	if ai.Endpoint != nil {
		e = append(e, corev1.EnvVar{Name: EnvAIEndpoint, Value: string(*ai.Endpoint)})
	}
	if ai.Provider == v1alpha1.AIProviderOllama {
		e = append(e, corev1.EnvVar{Name: EnvOllamaURL, Value: string(ptr.Deref(ai.Endpoint, ""))}, corev1.EnvVar{Name: EnvOllamaModel, Value: ai.Model})
	}
	if ai.Temperature != nil {
		e = append(e, corev1.EnvVar{Name: EnvAITemperature, Value: *ai.Temperature})
	}
	if ai.MaxTokens != nil {
		e = append(e, corev1.EnvVar{Name: EnvAIMaxTokens, Value: strconv.Itoa(int(*ai.MaxTokens))})
	}
	if ai.SystemPrompt != nil {
		e = append(e, corev1.EnvVar{Name: EnvAISystemPrompt, Value: *ai.SystemPrompt})
	}
	if ai.MaxContextMessages != nil {
		e = append(e, corev1.EnvVar{Name: EnvMaxContextMessages, Value: strconv.Itoa(int(*ai.MaxContextMessages))})
	}
	if k := ai.APIKeySecretRef; k != nil {
		e = append(e, secretEnv(EnvAIAPIKey, k.Name, k.Key))
		e[len(e)-1].ValueFrom.SecretKeyRef.Optional = k.Optional
	}
	return e
}

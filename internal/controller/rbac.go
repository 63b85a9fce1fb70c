package controller

// The provider's ClusterRole, package/rbac/clusterrole.yaml, is generated
// from the markers below (make generate). They are what the controllers of
// this package need to reconcile in the provider's own cluster; a remote
// target cluster's kubeconfig needs the same rules there. Secrets are not
// here: they are read one by one, uncached, and only in the namespaces a
// RoleBinding grants (see internal/clients).

// The provider's own APIs, and the CRDs its controllers wait for. A
// ProviderConfigUsage blocks its resource's deletion, which needs finalizers.
// +kubebuilder:rbac:groups=lambda.m.crossplane.io,resources=lambdafunctions;lambdaagents,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=lambda.m.crossplane.io,resources=lambdafunctions/status;lambdaagents/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=lambda.m.crossplane.io,resources=lambdafunctions/finalizers;lambdaagents/finalizers,verbs=update
// +kubebuilder:rbac:groups=lambda.m.crossplane.io,resources=providerconfigs;clusterproviderconfigs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=lambda.m.crossplane.io,resources=providerconfigs/status;clusterproviderconfigs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=lambda.m.crossplane.io,resources=providerconfigusages,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;update;patch

// What render makes of a function or an agent, in the target cluster.
// +kubebuilder:rbac:groups=serving.knative.dev,resources=services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=serving.knative.dev,resources=revisions,verbs=get
// +kubebuilder:rbac:groups=eventing.knative.dev,resources=brokers;triggers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=sources.knative.dev,resources=pingsources,verbs=get;list;watch;create;update;patch;delete
// A RabbitMQ Broker's RabbitmqBrokerConfig is read by name, never listed:
// clusters without eventing-rabbitmq have none.
// +kubebuilder:rbac:groups=eventing.knative.dev,resources=rabbitmqbrokerconfigs,verbs=get;create;update;patch;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update;patch;delete

// A build's outcome is its pod's termination message; whether a namespace
// admits a build is its Pod Security labels.
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

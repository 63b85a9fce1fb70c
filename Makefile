# provider-knative-lambda
#
#   make run    start the provider (and, with no reachable cluster, a local
#               control plane) and apply the examples
#   make test   every test, against a real kube-apiserver and etcd

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

CACHE ?= $(CURDIR)/.cache
BIN   := $(CACHE)/bin
GOBUILD := bash cluster/gobuild.sh $(BIN)

KUBE_MOD := cluster/local/build/kube-apiserver
KUBE_VERSION := $(shell awk '$$1=="require" && $$2=="k8s.io/kubernetes" {print $$3}' $(KUBE_MOD)/go.mod)
KUBE_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(KUBE_VERSION))) \
	-X k8s.io/component-base/version.gitTreeState=clean

# The local control plane and the tests find etcd and kube-apiserver here.
export KUBEBUILDER_ASSETS := $(BIN)

# One set of build flags for the tests, vet and the images, so a cold machine
# compiles the dependency tree once instead of once per set of flags. The
# binaries are static and reproducible, and no test needs cgo.
export CGO_ENABLED := 0
export GOFLAGS := $(strip $(GOFLAGS) -trimpath)

.PHONY: all build vet linter lint test chaos fuzz run generate check-generated tools controlplane testservers kube-controller-manager node node-packages kaniko relay knative base-images crossplane crossplane-core flux images kubectl-lambda xpkg release check-tracked e2e peers runtime-peers bench bench-cluster clean

all: build vet

build:
	go build ./...

vet:
	go vet -tags e2e ./...

## linter: golangci-lint, built from cluster/lint once and cached.
linter:
	@$(GOBUILD) golangci-lint cluster/lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint

## lint: golangci-lint with .golangci.yml over every package of the module.
lint: linter
	$(BIN)/golangci-lint run ./...

## controlplane: etcd and kube-apiserver, built from their Go modules once and cached.
controlplane:
	@$(GOBUILD) etcd cluster/local/build/etcd .
	@$(GOBUILD) kube-apiserver $(KUBE_MOD) k8s.io/kubernetes/cmd/kube-apiserver "$(KUBE_LDFLAGS)"

## kube-controller-manager: only its garbage collector runs, in the end-to-end
## tests, to finish the foreground deletions Crossplane starts. Built after
## kube-apiserver, whose packages it shares: two builds at once would each
## compile them.
KCM_MOD := cluster/local/build/kube-controller-manager
kube-controller-manager: controlplane
	@$(GOBUILD) kube-controller-manager $(KCM_MOD) k8s.io/kubernetes/cmd/kube-controller-manager "$(KUBE_LDFLAGS)"

## node: kubelet, kube-scheduler and kube-proxy, the node of the local
## cluster, of kube-apiserver's release; built after kube-controller-manager,
## whose packages they share.
## The pod sandbox's image is assembled from cluster/local/cmd/pause; the
## node's registry is cluster/local/cmd/registry; the cluster DNS is CoreDNS.
NODE_MOD := cluster/local/build/kube-node
KANIKO_IMAGE := 10.87.0.2:5000/tools/kaniko-executor:v1.24.0
node: kube-controller-manager node-packages
	@$(GOBUILD) kubelet $(NODE_MOD) k8s.io/kubernetes/cmd/kubelet "$(KUBE_LDFLAGS)"
	@$(GOBUILD) kube-scheduler $(NODE_MOD) k8s.io/kubernetes/cmd/kube-scheduler "$(KUBE_LDFLAGS)"
	@$(GOBUILD) kube-proxy $(NODE_MOD) k8s.io/kubernetes/cmd/kube-proxy "$(KUBE_LDFLAGS)"
	go build -o $(BIN)/pause ./cluster/local/cmd/pause
	go build -o $(BIN)/registry ./cluster/local/cmd/registry
	go run ./cluster/images --binary=$(BIN)/pause --name=pause --arch=$(shell go env GOARCH) \
		--tag=registry.k8s.io/pause:3.10 --out=$(BIN)/pause.tar
	@$(GOBUILD) coredns cluster/local/build/coredns .
	go run ./cluster/images --binary=$(BIN)/coredns --name=coredns --arch=$(shell go env GOARCH) \
		--tag=registry.local/system/coredns:v1.13.1 --out=$(BIN)/coredns.tar

## kaniko: the Kaniko executor, as an image tarball build Jobs on the local
## cluster run (the binary at /kaniko/executor, as root, as upstream's).
kaniko:
	@$(GOBUILD) kaniko-executor cluster/local/build/kaniko github.com/GoogleContainerTools/kaniko/cmd/executor
	go run ./cluster/images --binary=$(BIN)/kaniko-executor --name=executor --dir=/kaniko --root \
		--arch=$(shell go env GOARCH) --tag=$(KANIKO_IMAGE) --out=$(BIN)/kaniko.tar

## relay: the relay agents' forwards deliver through (cmd/relay), as an
## image tarball the local cluster's agents run.
RELAY_IMAGE := 10.87.0.2:5000/tools/relay-knative-lambda:dev
relay:
	go build -ldflags "-s -w" -o $(BIN)/relay ./cmd/relay
	@$(call image,relay,$(RELAY_IMAGE))

## knative: Knative Serving and Eventing (the MT channel broker and the
## in-memory channel), built from their modules, and the local cluster's
## networking layer (cluster/local/cmd/kingress), each as an image tarball
## the node imports, tagged registry.local/knative/NAME:VERSION, where NAME
## is the command's path with - for /cmd/ and / (serving-controller) and
## VERSION its module's. A tarball is assembled again only when its binary
## changed. One at a time: they share their packages, which two builds at
## once would each compile.
KNATIVE_MOD := cluster/local/build/knative
KNATIVE_CMDS := serving/cmd/controller serving/cmd/activator serving/cmd/autoscaler serving/cmd/webhook serving/cmd/queue \
	eventing/cmd/controller eventing/cmd/webhook eventing/cmd/mtping eventing/cmd/mtchannel_broker \
	eventing/cmd/broker/ingress eventing/cmd/broker/filter \
	eventing/cmd/in_memory/channel_controller eventing/cmd/in_memory/channel_dispatcher
ZONEINFO := $(shell go env GOROOT)/lib/time/zoneinfo.zip
# image BINARY TAG [FLAGS]: assemble the binary's image, when it is newer
# than the tarball.
image = if [[ $(BIN)/$(1) -nt $(BIN)/$(1).tar ]]; then \
	go run ./cluster/images --binary=$(BIN)/$(1) --name=$(1) --arch=$(shell go env GOARCH) \
		--zoneinfo=$(ZONEINFO) --tag=$(2) --out=$(BIN)/$(1).tar $(3); fi
knative:
	@for c in $(KNATIVE_CMDS); do \
		n=$${c//\/cmd\//-}; n=$${n//\//-}; \
		v=$$(awk -v m="knative.dev/$${c%%/*}" '$$1==m {print $$2}' $(KNATIVE_MOD)/go.mod); \
		$(GOBUILD) knative-$$n $(KNATIVE_MOD) knative.dev/$$c; \
		$(call image,knative-$$n,registry.local/knative/$$n:$$v); \
	done
	go build -o $(BIN)/kingress ./cluster/local/cmd/kingress
	@$(call image,kingress,registry.local/knative/kingress:dev)

## base-images: the root file systems of the runtimes' base images, from
## Debian's packages by debootstrap, once, into .cache/rootfs; and the
## static image Go functions run on (cluster/images without a binary).
STATIC_IMAGE := 10.87.0.2:5000/library/static:nonroot
base-images: node-packages
	@bash cluster/local/node/baseimages.sh $(CACHE)/rootfs
	go run ./cluster/images --arch=$(shell go env GOARCH) --tag=$(STATIC_IMAGE) \
		--zoneinfo=$(shell go env GOROOT)/lib/time/zoneinfo.zip --out=$(BIN)/static.tar

## node-packages: containerd, runc, the CNI plugins, iptables and
## debootstrap, from Debian's packages, those missing.
node-packages:
	@bash cluster/local/node/packages.sh

## testservers: real servers the integration tests talk to (an S3 gateway).
testservers:
	@$(GOBUILD) versitygw cluster/local/build/versitygw github.com/versity/versitygw/cmd/versitygw

## crossplane: the Crossplane CLI, for crossplane render and validate in the tests.
CROSSPLANE_MOD := cluster/local/build/crossplane
CROSSPLANE_VERSION := $(shell awk '$$1=="require" && $$2=="github.com/crossplane/crossplane/v2" {print $$3}' $(CROSSPLANE_MOD)/go.mod)
crossplane:
	@$(GOBUILD) crossplane $(CROSSPLANE_MOD) github.com/crossplane/crossplane/v2/cmd/crank \
		"-X github.com/crossplane/crossplane/v2/internal/version.version=$(CROSSPLANE_VERSION)"

## crossplane-core: Crossplane itself, for the end-to-end tests, which run it
## outside a cluster against the local control plane, and for the node,
## which runs it from its own Helm chart: its image (the binary, its CRDs
## and webhook configurations, where Crossplane's image has them), and the
## program that renders the chart with Helm's engine. Its package manager
## checks packages' Crossplane constraints against the version set here.
CORE_MOD := cluster/local/build/crossplane-core
CORE_VERSION := $(shell awk '$$1=="require" && $$2=="github.com/crossplane/crossplane/v2" {print $$3}' $(CORE_MOD)/go.mod)
CHART_MOD := cluster/local/build/crossplane-chart
crossplane-core:
	@$(GOBUILD) crossplane-core $(CORE_MOD) github.com/crossplane/crossplane/v2/cmd/crossplane \
		"-X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=$(CORE_VERSION)"
	@$(GOBUILD) crossplane-chart $(CHART_MOD) github.com/knative-lambda/provider-knative-lambda/$(CHART_MOD)
	@core=$$(cd $(CORE_MOD) && go list -m -f '{{.Dir}}' github.com/crossplane/crossplane/v2) && \
		$(call image,crossplane-core,registry.local/crossplane/crossplane:$(CORE_VERSION),--tree=$$core/cluster/crds:/crds --tree=$$core/cluster/webhookconfigurations:/webhookconfigurations)

## flux: Flux's source-controller and kustomize-controller, for the
## end-to-end test that reconciles claims from git; both pinned in one
## wrapper module, so what they share is compiled once.
FLUX_MOD := cluster/local/build/flux
flux:
	@$(GOBUILD) source-controller $(FLUX_MOD) github.com/fluxcd/source-controller
	@$(GOBUILD) kustomize-controller $(FLUX_MOD) github.com/fluxcd/kustomize-controller

## tools: the code generators, pinned in cluster/tools.
tools:
	@$(GOBUILD) controller-gen cluster/tools sigs.k8s.io/controller-tools/cmd/controller-gen
	@$(GOBUILD) angryjet cluster/tools github.com/crossplane/crossplane-tools/cmd/angryjet

## generate: deepcopy, CRDs, XRDs and Compositions, and crossplane-runtime
## method sets. The provider's CRDs go to package/crds, the function Input's
## to package/function/input; the platform API's CRDs are only the source of
## the XRDs in package/configuration.
PLATFORM_CRDS := $(CACHE)/platform-crds
generate: tools
	rm -rf package/crds/*.yaml package/function/input/*.yaml package/rbac/*.yaml $(PLATFORM_CRDS)
	$(BIN)/controller-gen object:headerFile=cluster/tools/boilerplate.go.txt paths=./apis/... paths=./fn/input/... paths=./internal/knative/...
	$(BIN)/controller-gen crd:crdVersions=v1 paths=./apis/v1alpha1/... output:artifacts:config=package/crds
	$(BIN)/controller-gen crd:crdVersions=v1 paths=./fn/input/... output:artifacts:config=package/function/input
	$(BIN)/controller-gen crd:crdVersions=v1 paths=./apis/platform/... output:artifacts:config=$(PLATFORM_CRDS)
	go run ./apis/platform/generate $(PLATFORM_CRDS) package/configuration
	$(BIN)/controller-gen rbac:roleName=provider-knative-lambda,fileName=clusterrole.yaml paths=./internal/controller/... output:rbac:artifacts:config=package/rbac
	$(BIN)/controller-gen rbac:roleName=provider-knative-lambda-secrets,fileName=secrets-clusterrole.yaml paths=./internal/clients/... output:rbac:artifacts:config=package/rbac
	$(BIN)/angryjet generate-methodsets --header-file=cluster/tools/boilerplate.go.txt ./apis/...

## check-generated: fail when generated files differ from what make generate writes.
GENERATED := ':(glob)apis/**/zz_generated*.go' ':(glob)fn/**/zz_generated*.go' ':(glob)internal/knative/**/zz_generated*.go' package/crds package/function package/configuration package/rbac
check-generated: generate
	@if [ -n "$$(git status --porcelain -- $(GENERATED))" ]; then \
		echo "generated files are stale; run make generate and commit:"; \
		git status --porcelain -- $(GENERATED); exit 1; fi

## test: every test, against a real kube-apiserver and etcd; test binaries
## without DWARF (-w), which nothing reads, link a fifth faster. The node's
## package runs a real cluster and builds every runtime with Kaniko, longer
## than go test's default 10 minutes allow one package.
test: controlplane kube-controller-manager node kaniko relay knative base-images testservers crossplane xpkg
	go test -count=1 -timeout=30m -ldflags=-w ./...

## e2e: Crossplane core, the function and the provider as processes against
## a local control plane, installed from a registry by the package manager,
## driving a claim and a v2 XR to Knative workloads; then the same with
## claims that Flux applies from a git repository.
e2e: controlplane kube-controller-manager node kaniko relay knative base-images testservers crossplane crossplane-core flux xpkg
	go test -tags e2e -count=1 -v -timeout=30m ./cluster/e2e

## chaos: 300 LambdaFunctions converge while the provider is killed 10 times
## and kube-apiserver and etcd restart, then are deleted while it is killed 3
## times; prints the figures. make test runs a small one. CHAOS_FLAGS change
## the size, such as -chaos.seed=N to replay a fault schedule.
CHAOS_FLAGS ?= -chaos.functions=300 -chaos.kills=10 -chaos.delete-kills=3
chaos: controlplane kube-controller-manager
	go test -count=1 -v -timeout=60m -run='^TestChaos$$' ./cluster/chaos -args $(CHAOS_FLAGS)

## fuzz: each fuzz target for FUZZTIME; render may refuse any spec, never
## panic, and the function's fast path reads and answers any request as
## protobuf does. A count of executions, not a duration: Go 1.26's fuzz coordinator
## can fail a duration run at its deadline with "context deadline exceeded"
## and no failing input (go.dev/issue/75804, fixed in Go 1.27).
FUZZTIME ?= 30000x
fuzz:
	go test -run='^$$' -fuzz='^FuzzFunction$$' -fuzztime=$(FUZZTIME) ./internal/render/fuzz
	go test -run='^$$' -fuzz='^FuzzAgent$$' -fuzztime=$(FUZZTIME) ./internal/render/fuzz
	go test -run='^$$' -fuzz='^FuzzReadRequest$$' -fuzztime=$(FUZZTIME) ./fn/codec
	go test -run='^$$' -fuzz='^FuzzAnswersAlike$$' -fuzztime=$(FUZZTIME) ./fn

## peers: what the benchmarks measure ours against, built from their modules
## into .cache/peers; their code is never committed. A peer the module proxy
## refuses is reported and left out of the benchmark, unless
## PEER_SRC_<name>=DIR names a checkout of its source (such as a release tag
## of its repository), which is built with its own go.mod.
PEERS := $(CACHE)/peers
PEER_MODS := cluster/bench/build
PEER_FUNCTIONS := function-go-templating function-patch-and-transform
peers:
	@bash cluster/gobuild.sh $(PEERS) provider-kubernetes $(PEER_MODS)/provider-kubernetes \
		github.com/crossplane-contrib/provider-kubernetes/cmd/provider
	@$(foreach fn,$(PEER_FUNCTIONS),GOFLAGS=-mod=mod bash cluster/gobuild.sh $(PEERS) $(fn) \
		$(if $(PEER_SRC_$(fn)),$(PEER_SRC_$(fn)) .,$(PEER_MODS)/$(fn) github.com/crossplane-contrib/$(fn)) \
		|| echo "$(fn): not built; the benchmark leaves it out";)

## runtime-peers: the runtimes runtimebench measures the wrappers against,
## built once into $(PEERS): Knative Functions' faas-js-runtime (npm) and
## func-go, and aws-lambda-go behind AWS's runtime interface emulator. One
## that cannot be built here is said so and left out.
RUNTIME_PEERS_GO := func-go-echo:. aws-lambda-go-echo:. aws-lambda-rie:github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie
runtime-peers:
	@$(foreach p,$(RUNTIME_PEERS_GO),bash cluster/gobuild.sh $(PEERS) $(word 1,$(subst :, ,$(p))) $(PEER_MODS)/$(word 1,$(subst :, ,$(p))) $(word 2,$(subst :, ,$(p))) \
		|| echo "$(word 1,$(subst :, ,$(p))): not built; the benchmark leaves it out";)
	@d=$(PEERS)/faas-js-runtime; stamp=$$(cat $(PEER_MODS)/faas-js-runtime/package*.json | sha256sum | cut -c1-16); \
	if [ "$$(cat $$d/stamp 2>/dev/null)" != "$$stamp" ]; then \
		rm -rf $$d && mkdir -p $$d && cp $(PEER_MODS)/faas-js-runtime/package*.json $$d/ && \
		(cd $$d && npm ci --no-audit --no-fund --silent) && echo $$stamp > $$d/stamp \
		|| echo "faas-js-runtime: not built; the benchmark leaves it out"; fi

## bench-cluster: what users choose a serverless platform by, on the real
## local cluster: the seed's function from apply to its URL's reply through
## the provider as Crossplane installs it, each runtime's build and cold
## start, split into Knative's part and the wrapper's, a burst's scale-out
## from zero, events through a Broker, and the platform's footprint at rest,
## CLUSTER_BENCHTIME times each (a function idles to zero in about 40 s
## before each cold start).
CLUSTER_BENCHTIME ?= 3x
bench-cluster: controlplane kube-controller-manager node kaniko relay knative base-images crossplane crossplane-core xpkg
	go test -run='^$$' -bench=. -benchtime=$(CLUSTER_BENCHTIME) -timeout=60m -ldflags=-w ./cluster/local/node

## bench: the runtime wrappers against bare servers and peer runtimes, the
## function against its peers over gRPC, then the provider
## against provider-kubernetes at scale on local control planes, then the
## real cluster's figures (bench-cluster). Prints numbers;
## docs/benchmarks.md keeps them. BENCH_FLAGS go to providerbench, such as
## --n=200 for a short run.
bench: controlplane peers runtime-peers bench-cluster
	go run ./cluster/bench/cmd/runtimebench --peers=$(PEERS)
	go run ./cluster/bench/cmd/fnbench --peers=$(PEERS)
	go run ./cluster/bench/cmd/providerbench --peer=$(PEERS)/provider-kubernetes $(BENCH_FLAGS)

## run: the provider against the current kube context, or else the local
## cluster, where Crossplane's package manager installs the packages
## (RUN_FLAGS=--api-server-only: an API server alone, and the provider as a
## process), and the function for crossplane render.
run: controlplane crossplane crossplane-core node kaniko relay knative base-images xpkg
	go build -o $(BIN)/run ./cluster/local/cmd/run
	$(BIN)/run $(RUN_FLAGS)

## images: the provider's and the function's static binaries for each of
## ARCHES, each assembled into an OCI image tarball without a container
## engine or a base image (cluster/images). Tests need only this machine's
## architecture; make release builds every one a release ships.
ARCHES   ?= $(shell go env GOARCH)
RELEASE_ARCHES := amd64 arm64
VERSION  ?= v0.1.0
REGISTRY ?= xpkg.crossplane.io/knative-lambda
OUTPUT   := $(CURDIR)/_output
images:
	go build -o $(BIN)/images ./cluster/images
	for arch in $(ARCHES); do \
		out=$(OUTPUT)/linux_$$arch; mkdir -p $$out; \
		GOOS=linux GOARCH=$$arch go build -ldflags "-s -w" -o $$out/provider ./cmd/provider; \
		GOOS=linux GOARCH=$$arch go build -ldflags "-s -w" -o $$out/function ./fn; \
		GOOS=linux GOARCH=$$arch go build -ldflags "-s -w" -o $$out/relay ./cmd/relay; \
		$(BIN)/images --binary=$$out/provider --name=provider --arch=$$arch \
			--tag=$(REGISTRY)/provider-knative-lambda:$(VERSION) --out=$$out/provider-image.tar; \
		$(BIN)/images --binary=$$out/function --name=function --arch=$$arch \
			--tag=$(REGISTRY)/function-knative-lambda:$(VERSION) --out=$$out/function-image.tar; \
		$(BIN)/images --binary=$$out/relay --name=relay --arch=$$arch \
			--tag=$(REGISTRY)/relay-knative-lambda:$(VERSION) --out=$$out/relay-image.tar; \
	done

## kubectl-lambda: the kubectl plugin, into _output/bin; put that folder on
## PATH and kubectl runs it as kubectl lambda.
kubectl-lambda:
	go build -o $(OUTPUT)/bin/kubectl-lambda ./cmd/kubectl-lambda

## xpkg: the provider and function packages for each of ARCHES, with their
## runtime images embedded, and the configuration package, built by the
## Crossplane CLI into _output. package/ holds the provider's files; the
## function's and the configuration's are in folders below it.
PROVIDER_IGNORE := configuration/*.yaml,configuration/rbac/*.yaml,function/*.yaml,function/input/*.yaml,rbac/*.yaml
xpkg: images crossplane
	for arch in $(ARCHES); do \
		out=$(OUTPUT)/linux_$$arch; \
		$(BIN)/crossplane xpkg build --package-root=package --ignore='$(PROVIDER_IGNORE)' --examples-root=examples \
			--embed-runtime-image-tarball=$$out/provider-image.tar --package-file=$$out/provider-knative-lambda.xpkg; \
		$(BIN)/crossplane xpkg build --package-root=package/function --examples-root=examples/platform \
			--embed-runtime-image-tarball=$$out/function-image.tar --package-file=$$out/function-knative-lambda.xpkg; \
	done
	$(BIN)/crossplane xpkg build --package-root=package/configuration --ignore='rbac/*.yaml' --examples-root=examples/platform \
		--package-file=$(OUTPUT)/configuration-knative-lambda.xpkg

## check-tracked: no tracked file is over 1 MB, so no build output or
## vendored binary is ever committed.
check-tracked:
	@big=$$(git ls-files -z | xargs -0 stat -c '%s %n' 2>/dev/null | awk '$$1 > 1048576 {print $$1, $$2}'); \
	if [ -n "$$big" ]; then echo "tracked files over 1 MB:"; echo "$$big"; exit 1; fi

## release: the packages for every architecture a release ships.
release:
	$(MAKE) xpkg ARCHES="$(RELEASE_ARCHES)"

clean:
	rm -rf $(CACHE) $(OUTPUT)

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

.PHONY: all build vet test fuzz run generate check-generated tools controlplane testservers crossplane clean

all: build vet

build:
	go build ./...

vet:
	go vet ./...

## controlplane: etcd and kube-apiserver, built from their Go modules once and cached.
controlplane:
	@$(GOBUILD) etcd cluster/local/build/etcd .
	@$(GOBUILD) kube-apiserver $(KUBE_MOD) k8s.io/kubernetes/cmd/kube-apiserver "$(KUBE_LDFLAGS)"

## testservers: real servers the integration tests talk to (an S3 gateway).
testservers:
	@$(GOBUILD) versitygw cluster/local/build/versitygw github.com/versity/versitygw/cmd/versitygw

## crossplane: the Crossplane CLI, for crossplane render and validate in the tests.
CROSSPLANE_MOD := cluster/local/build/crossplane
CROSSPLANE_VERSION := $(shell awk '$$1=="require" && $$2=="github.com/crossplane/crossplane/v2" {print $$3}' $(CROSSPLANE_MOD)/go.mod)
crossplane:
	@$(GOBUILD) crossplane $(CROSSPLANE_MOD) github.com/crossplane/crossplane/v2/cmd/crank \
		"-X github.com/crossplane/crossplane/v2/internal/version.version=$(CROSSPLANE_VERSION)"

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
	rm -rf package/crds/*.yaml package/function/input/*.yaml $(PLATFORM_CRDS)
	$(BIN)/controller-gen object:headerFile=cluster/tools/boilerplate.go.txt paths=./apis/... paths=./fn/input/...
	$(BIN)/controller-gen crd:crdVersions=v1 paths=./apis/v1alpha1/... output:artifacts:config=package/crds
	$(BIN)/controller-gen crd:crdVersions=v1 paths=./fn/input/... output:artifacts:config=package/function/input
	$(BIN)/controller-gen crd:crdVersions=v1 paths=./apis/platform/... output:artifacts:config=$(PLATFORM_CRDS)
	go run ./apis/platform/generate $(PLATFORM_CRDS) package/configuration
	$(BIN)/angryjet generate-methodsets --header-file=cluster/tools/boilerplate.go.txt ./apis/...

## check-generated: fail when generated files differ from what make generate writes.
GENERATED := ':(glob)apis/**/zz_generated*.go' ':(glob)fn/**/zz_generated*.go' package/crds package/function package/configuration
check-generated: generate
	@if [ -n "$$(git status --porcelain -- $(GENERATED))" ]; then \
		echo "generated files are stale; run make generate and commit:"; \
		git status --porcelain -- $(GENERATED); exit 1; fi

## test: every test, against a real kube-apiserver and etcd.
test: controlplane testservers crossplane
	go test -count=1 ./...

## fuzz: each fuzz target for FUZZTIME; render may refuse any spec, never panic.
FUZZTIME ?= 15s
fuzz:
	go test -run='^$$' -fuzz='^FuzzFunction$$' -fuzztime=$(FUZZTIME) ./internal/render
	go test -run='^$$' -fuzz='^FuzzAgent$$' -fuzztime=$(FUZZTIME) ./internal/render

## run: the provider against the current kube context, or a local control plane,
## and the function for crossplane render.
run: controlplane crossplane
	go build -o $(BIN)/run ./cluster/local/cmd/run
	$(BIN)/run $(RUN_FLAGS)

clean:
	rm -rf $(CACHE)

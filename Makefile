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

.PHONY: all build vet test fuzz run generate check-generated tools controlplane testservers clean

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

## tools: the code generators, pinned in cluster/tools.
tools:
	@$(GOBUILD) controller-gen cluster/tools sigs.k8s.io/controller-tools/cmd/controller-gen
	@$(GOBUILD) angryjet cluster/tools github.com/crossplane/crossplane-tools/cmd/angryjet

## generate: deepcopy, CRDs (package/crds) and crossplane-runtime method sets.
generate: tools
	rm -f package/crds/*.yaml
	$(BIN)/controller-gen object:headerFile=cluster/tools/boilerplate.go.txt \
		crd:crdVersions=v1 paths=./apis/... output:artifacts:config=package/crds
	$(BIN)/angryjet generate-methodsets --header-file=cluster/tools/boilerplate.go.txt ./apis/...

## check-generated: fail when generated files differ from what make generate writes.
check-generated: generate
	@if [ -n "$$(git status --porcelain -- ':(glob)apis/**/zz_generated*.go' package/crds)" ]; then \
		echo "generated files are stale; run make generate and commit:"; \
		git status --porcelain -- ':(glob)apis/**/zz_generated*.go' package/crds; exit 1; fi

## test: every test, against a real kube-apiserver and etcd.
test: controlplane testservers
	go test -count=1 ./...

## fuzz: each fuzz target for FUZZTIME; render may refuse any spec, never panic.
FUZZTIME ?= 15s
fuzz:
	go test -run='^$$' -fuzz='^FuzzFunction$$' -fuzztime=$(FUZZTIME) ./internal/render
	go test -run='^$$' -fuzz='^FuzzAgent$$' -fuzztime=$(FUZZTIME) ./internal/render

## run: the provider against the current kube context, or a local control plane.
run: controlplane
	go build -o $(BIN)/run ./cluster/local/cmd/run
	$(BIN)/run $(RUN_FLAGS)

clean:
	rm -rf $(CACHE)

# actorlet — see README.md.
GO        ?= go
ROOT_DIR  ?= $(CURDIR)/_out/demo
PORT      ?= 10248
# The read-only port (the kubelet's 10255, off unless given): /pods, /metrics.
READ_ONLY_PORT ?= 10255
# Where test/e2e/env.sh keeps its containerd (config, state, socket, env file).
# (ACTORLET_E2E_PREFIX and ACTORLET_CLUSTER_PREFIX from the environment are kept.)
E2E_PREFIX ?= $(or $(ACTORLET_E2E_PREFIX),/tmp/actorlet-e2e)
export ACTORLET_E2E_PREFIX := $(E2E_PREFIX)
ENV_SH    := test/e2e/env.sh
# Where test/e2e/cluster.sh keeps its etcd + kube-apiserver.
CLUSTER_PREFIX ?= $(or $(ACTORLET_CLUSTER_PREFIX),/tmp/actorlet-cluster)
export ACTORLET_CLUSTER_PREFIX := $(CLUSTER_PREFIX)
CLUSTER_SH := test/e2e/cluster.sh
BUF       := cd proto && $(GO) tool -modfile=tools/go.mod buf

.PHONY: all build run test test-unit conformance test-e2e test-containerd-relist e2e-up e2e-down cluster-up cluster-down bench bench-sim bench-containerd bench-cluster bench-fleet proto proto-check vet clean

all: build

build:
	$(GO) build -o bin/actorlet ./cmd/actorlet

# A node on the in-process simulated runtime with the example manifests.
# Look at it with: curl -s localhost:$(READ_ONLY_PORT)/pods | jq '.items[].status.phase'
# (the health port, $(PORT), serves /healthz only).
run:
	$(GO) run ./cmd/actorlet run --container-runtime-endpoint=sim:// \
		--pod-manifest-path=cmd/actorlet/examples --root-dir=$(ROOT_DIR) \
		--pod-logs-dir=$(ROOT_DIR)/logs --hostname-override=demo --healthz-port=$(PORT) --read-only-port=$(READ_ONLY_PORT) --log-format=console

vet:
	$(GO) vet ./...

# Every test (as root: it sets up containerd 2.4 + runc + CNI with
# test/e2e/env.sh, and etcd + kube-apiserver with test/e2e/cluster.sh): unit,
# transcript and property tests, the journal's subprocess tests, the
# end-to-end tests on the simulated runtime over a socket and on containerd
# (kill -9 churns on both), the cluster tests against the real apiserver,
# kubeadm init and join with actorlet as the kubelet (test/kubeadm: kubeadm
# built once by cluster.sh, each node in namespaces of its own), then the
# containerd tests again on Debian's containerd 1.6, which serves no
# container events (the relist path). Everything is torn down at the end, also
# on failure.
test: vet
	$(ENV_SH) up && $(CLUSTER_SH) up && $(CLUSTER_SH) install kubelet kubeadm || { rc=$$?; $(CLUSTER_SH) down; $(ENV_SH) down; exit $$rc; }
	set -a; . $(E2E_PREFIX)/env; . $(CLUSTER_PREFIX)/env; set +a; \
	ACTORLET_E2E_REQUIRE_CONTAINERD=1 ACTORLET_E2E_REQUIRE_CLUSTER=1 $(GO) test -count=1 -timeout 45m ./...; rc=$$?; \
	$(CLUSTER_SH) down; $(ENV_SH) down; exit $$rc
	$(MAKE) test-containerd-relist

test-containerd-relist:
	$(ENV_SH) down
	FLAVOR=debian $(ENV_SH) up
	set -a; . $(E2E_PREFIX)/env; set +a; \
	ACTORLET_E2E_REQUIRE_CONTAINERD=1 $(GO) test -count=1 -v -timeout 20m -run 'TestContainerd(Pods|Restart)' ./test/e2e/; rc=$$?; \
	$(ENV_SH) down; exit $$rc

# Tests that need neither root nor containerd (containerd tests skip).
test-unit: vet
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /test/e2e)

# End-to-end tests only, on an environment set up with `make e2e-up`
# (containerd tests skip without one).
test-e2e:
	if [ -f $(E2E_PREFIX)/env ]; then set -a; . $(E2E_PREFIX)/env; set +a; fi; \
	if [ -f $(CLUSTER_PREFIX)/env ]; then set -a; . $(CLUSTER_PREFIX)/env; set +a; fi; \
	$(GO) test -count=1 -v -timeout 45m ./test/e2e/

# The upstream node conformance suite (e2e.test v1.37.2) against one node on
# containerd (env.sh) and the control plane (cluster.sh), as root:
#   make conformance [NODE=actorlet|kubelet] [FOCUS=regexp|small|ci] [SKIP=regexp] [PROCS=n] [SUITE=full|node]
# builds e2e.test, ginkgo, agnhost (and the kubelet) once into the tool cache
# and the test images, runs the suite, prints passed/failed/skipped and every
# failure, and tears it all down. Default focus [NodeConformance] without
# [Serial], [Disruptive], [Flaky], [Slow], [Feature:*] and [Alpha]. FOCUS=ci
# is the fixed list .ci/run runs (every spec must pass), on e2e-node.test
# (SUITE=node: test/e2e/common's specs only, cheaper to build). See
# test/conformance/run.sh.
NODE ?= actorlet
conformance:
	NODE=$(NODE) FOCUS='$(FOCUS)' SKIP='$(SKIP)' SUITE='$(SUITE)' PROCS=$(or $(PROCS),1) test/conformance/run.sh all

# containerd for the end-to-end tests and for trying actorlet on (FLAVOR=debian
# for Debian's containerd 1.6); `make e2e-down` removes its pods and stops it.
e2e-up:
	$(ENV_SH) up
e2e-down:
	$(ENV_SH) down

# etcd + kube-apiserver v1.37.2 on 127.0.0.1 for the cluster tests (built once,
# about 7 minutes cold); `make cluster-down` stops them.
cluster-up:
	$(CLUSTER_SH) up
cluster-down:
	$(CLUSTER_SH) down

# Benchmarks (not tests): the journal's micro-benchmarks, then whole-node
# scenarios on the in-process simulated runtime with a durable journal;
# printed as a table with the targets (reported, never enforced).
bench:
	{ $(GO) test -run '^$$' -bench . ./journal/; \
	  $(GO) test -run '^$$' -bench . -benchtime=1x -timeout 30m ./test/bench/; } | $(GO) run ./test/benchtable

# The deterministic simulation (package sim, `actorlet simulate`): 10,000 pod
# lifecycles with faults and node crashes across 100 nodes (wall time, virtual
# to wall ratio, against their targets), and the nodes that fit in 1 GiB.
# Printed as tables; targets are reported, never enforced.
bench-sim:
	$(GO) test -run '^$$' -bench 'Sim10k|NodesPerGiB' -benchtime=1x -timeout 30m ./sim/

# Pod startup latency on containerd, actorlet next to the bare CRI calls
# (sets up containerd like `make test`, and leaves it up).
bench-containerd:
	$(ENV_SH) up
	set -a; . $(E2E_PREFIX)/env; set +a; \
	$(GO) test -run '^$$' -bench . -benchtime=1x -timeout 30m ./test/benchcontainerd/

# 100 pods Running and deleted through a real API server: actorlet next to the
# upstream kubelet v1.37.2 (built once into the cluster's tools, run rootless),
# each on its own simulated runtime over a socket. Starts the control plane of
# `make cluster-up` if it is not up, and leaves it up.
bench-cluster:
	$(CLUSTER_SH) install kubelet
	$(CLUSTER_SH) status >/dev/null || $(CLUSTER_SH) up
	set -a; . $(CLUSTER_PREFIX)/env; set +a; \
	$(GO) test -run '^$$' -bench . -benchtime=1x -timeout 30m ./test/benchcluster/

# `actorlet fleet` side by side with KWOK v0.8.0 (built once into the
# cluster's tools by `cluster.sh install kwok`), each on a fresh control plane
# of its own (cluster.sh up, then down): nodes to Ready, a Deployment's pods to
# Running, a steady state (Leases on time?), the pods' deletion, and for
# actorlet a crash-looping and probe-failing share; wall time, the node
# process's CPU and peak RSS, API requests; a Markdown table. Defaults 1,000
# nodes, 10,000 pods, 5 min steady (about 30 min in all); smaller with e.g.
# FLEET_FLAGS='-nodes 100 -pods 1000 -steady 1m'. See test/benchfleet.
FLEET_FLAGS ?=
bench-fleet:
	$(CLUSTER_SH) install kwok
	$(GO) build -o _out/benchfleet/actorlet ./cmd/actorlet
	$(GO) build -o _out/benchfleet/benchfleet ./test/benchfleet
	_out/benchfleet/benchfleet -cluster-sh $(CLUSTER_SH) -actorlet _out/benchfleet/actorlet -out _out/benchfleet $(FLEET_FLAGS)

# Regenerate the protobuf code (buf and protoc-gen-go, pinned, run through the go command).
proto:
	$(BUF) generate

# Fails when the committed generated code differs from what `make proto` writes.
proto-check: proto
	git diff --exit-code -- proto/ || (echo "generated protobuf code is stale: run make proto and commit" >&2; exit 1)

clean:
	rm -rf bin _out

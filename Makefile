# actorlet — see README.md.
GO        ?= go
ROOT_DIR  ?= $(CURDIR)/_out/demo
PORT      ?= 10248
BUF       := cd proto && $(GO) tool -modfile=tools/go.mod buf

.PHONY: all build run test test-unit test-e2e bench proto proto-check vet clean

all: build

build:
	$(GO) build -o bin/actorlet ./cmd/actorlet

# A node on the in-process simulated runtime with the example manifests.
# Look at it with: curl -s localhost:$(PORT)/pods | jq '.items[].status.phase'
run:
	$(GO) run ./cmd/actorlet run --container-runtime-endpoint=sim:// \
		--pod-manifest-path=cmd/actorlet/examples --root-dir=$(ROOT_DIR) \
		--pod-logs-dir=$(ROOT_DIR)/logs --hostname-override=demo --healthz-port=$(PORT) --log-format=console

vet:
	$(GO) vet ./...

# Every test: unit, transcript and property tests, the journal's subprocess
# tests, and the end-to-end tests (the binary against sim-runtime over a
# socket, with 25 kill -9s).
test: vet
	$(GO) test -count=1 ./...

test-unit: vet
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /test/e2e)

test-e2e:
	$(GO) test -count=1 -v ./test/e2e/

# Benchmarks (not tests): the journal's micro-benchmarks, then whole-node
# scenarios on the in-process simulated runtime with a durable journal;
# printed as a table with the targets (reported, never enforced).
bench:
	{ $(GO) test -run '^$$' -bench . ./journal/; \
	  $(GO) test -run '^$$' -bench . -benchtime=1x -timeout 30m ./test/bench/; } | $(GO) run ./test/benchtable

# Regenerate the protobuf code (buf and protoc-gen-go, pinned, run through the go command).
proto:
	$(BUF) generate

# Fails when the committed generated code differs from what `make proto` writes.
proto-check: proto
	git diff --exit-code -- proto/ || (echo "generated protobuf code is stale: run make proto and commit" >&2; exit 1)

clean:
	rm -rf bin _out

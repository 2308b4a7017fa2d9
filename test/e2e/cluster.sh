#!/usr/bin/env bash
# A real control plane for actorlet's cluster tests, on 127.0.0.1 only: etcd
# v3.7.3, kube-apiserver, kube-scheduler and kube-controller-manager v1.37.2
# built from the Go module proxy through wrapper modules kept out of actorlet's
# go.mod, with the Node authorizer and NodeRestriction applied to nodes as to
# the upstream kubelet. The scheduler binds pods to the nodes; the
# controller-manager runs the workload controllers (Deployments, ReplicaSets,
# ...), garbage collection, namespaces and node lifecycle (NotReady taints).
#
#   test/e2e/cluster.sh install [kubelet] [kubeadm] [e2e] [e2e-node] [kwok]
#                                 build etcd, kube-apiserver, kube-scheduler, kube-controller-manager and
#                                 kubectl once (cached; about 10 min cold); `kubelet` also the upstream
#                                 kubelet (make bench-cluster compares actorlet with it), `kubeadm` also
#                                 kubeadm (test/kubeadm), `e2e` also e2e.test, ginkgo and agnhost
#                                 (make conformance), `e2e-node` also e2e-node.test (the specs of
#                                 test/e2e/common only: test/conformance/_e2enode), ginkgo and agnhost
#                                 (make conformance FOCUS=ci), `kwok` also KWOK v0.8.0 and its fast node, Lease
#                                 and pod stages (make bench-fleet)
#   test/e2e/cluster.sh up        install if needed, certificates and tokens, start etcd, the apiserver, the
#                                 scheduler and the controller-manager, write $PREFIX/env (source it for
#                                 the tests) and kubeconfigs
#   test/e2e/cluster.sh down      stop them by PID and remove their data
#   test/e2e/cluster.sh stop-apiserver, start-apiserver
#                                 stop the apiserver alone and start it again (the fault tests)
#   test/e2e/cluster.sh status
#
# ACTORLET_CLUSTER_PREFIX (default /tmp/actorlet-cluster), ACTORLET_TOOLS (default
# /var/cache/actorlet-tools). Ports on 127.0.0.1 (override to run two clusters at once):
# ACTORLET_API_PORT (16443), ACTORLET_ETCD_PORT (23790), ACTORLET_ETCD_PEER_PORT (etcd port + 10),
# ACTORLET_SCHEDULER_PORT (10259), ACTORLET_CONTROLLER_MANAGER_PORT (10257).
# ACTORLET_CONTROLLERS: the controller-manager's --controllers (default: the deployment, replicaset,
# statefulset, daemonset, job, cronjob, garbage-collector, namespace, node-lifecycle, taint-eviction
# and pod-garbage-collector controllers).
# ACTORLET_CONTROL_PLANE_QPS: the scheduler's and the controller-manager's --kube-api-qps (and
# --kube-api-burst, twice that); default theirs (50 and 20). ACTORLET_APISERVER_MAX_REQUESTS_INFLIGHT:
# the apiserver's --max-requests-inflight (and --max-mutating-requests-inflight, half that); default
# theirs (400 and 200). make bench-fleet raises both. ACTORLET_ETCD_QUOTA_BYTES: etcd's
# --quota-backend-bytes (default etcd's, 2 GiB; a fleet of 100,000 pods needs more).
# Tokens: admin (system:masters), system:kube-scheduler, system:kube-controller-manager and one
# node identity per name in ACTORLET_CLUSTER_NODES (default "node-1 node-2"), each
# system:node:<name> in system:nodes.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export PATH=/usr/local/go/bin:$PATH GOFLAGS=-buildvcs=false CGO_ENABLED=0
PREFIX=${ACTORLET_CLUSTER_PREFIX:-/tmp/actorlet-cluster}
TOOLS=${ACTORLET_TOOLS:-/var/cache/actorlet-tools}
K8S_VERSION=v1.37.2
STAGING_VERSION=v0.37.2
ETCD_VERSION=v3.7.3
METRICS_SERVER_VERSION=v0.8.0
KWOK_VERSION=v0.8.0
KWOK=$TOOLS/kwok-$KWOK_VERSION/kwok
BIN=$TOOLS/k8s-$K8S_VERSION
METRICS_SERVER=$TOOLS/metrics-server-$METRICS_SERVER_VERSION/metrics-server
ETCD_PORT=${ACTORLET_ETCD_PORT:-23790}
ETCD_PEER_PORT=${ACTORLET_ETCD_PEER_PORT:-$((ETCD_PORT + 10))}
API_PORT=${ACTORLET_API_PORT:-16443}
SCHEDULER_PORT=${ACTORLET_SCHEDULER_PORT:-10259}
CONTROLLER_MANAGER_PORT=${ACTORLET_CONTROLLER_MANAGER_PORT:-10257}
CONTROL_PLANE_QPS=${ACTORLET_CONTROL_PLANE_QPS:-}
APISERVER_INFLIGHT=${ACTORLET_APISERVER_MAX_REQUESTS_INFLIGHT:-}
ETCD_QUOTA=${ACTORLET_ETCD_QUOTA_BYTES:-}
# Workloads, garbage collection, namespaces, node lifecycle (the NotReady and
# unreachable taints) and eviction by those taints; no cloud, volume, service
# or certificate controllers.
CONTROLLERS=${ACTORLET_CONTROLLERS:-deployment-controller,replicaset-controller,statefulset-controller,daemonset-controller,job-controller,cronjob-controller,garbage-collector-controller,namespace-controller,node-lifecycle-controller,taint-eviction-controller,pod-garbage-collector-controller}
NODES=${ACTORLET_CLUSTER_NODES:-node-1 node-2}
PKI=$PREFIX/pki
CMD=${1:-}
unset BUILD DIE_LOGS # set per call below

now() { date +%s%N; }
since() { echo "$(( ($(now) - $1) / 1000000 )) ms"; }
log() { echo "cluster.sh $(date +%T.%3N) $*" >&2; }
# die MESSAGE: with the tails of the logs named in DIE_LOGS (default those of
# the apiserver and etcd).
die() {
  trap - ERR
  log "FAILED: $*"
  local f
  for f in ${DIE_LOGS:-apiserver etcd}; do
    f=$PREFIX/logs/$f.log
    if [ -s "$f" ]; then echo "--- last lines of $f:" >&2; tail -n 20 "$f" >&2; fi
  done
  exit 1
}
trap 'die "line $LINENO: \`$BASH_COMMAND\` exited with $?"' ERR

# wrapper DIR MODULE LDFLAGS PKG... writes a throwaway module in DIR requiring
# MODULE with the given REPLACES and a tools.go importing every PKG (so that
# `go mod tidy` keeps what all of them need), and builds the packages in BUILD
# (default: every PKG) into $BIN.
wrapper() {
  local dir=$1 mod=$2 ldflags=$3; shift 3
  mkdir -p "$dir"
  (
    cd "$dir"
    printf 'module local/actorlet-tools\n\ngo 1.26.0\n\ngodebug default=go1.26\n\nrequire %s\n' "$mod" >go.mod
    if [ -n "${REPLACES:-}" ]; then printf 'replace (\n%s)\n' "$REPLACES" >>go.mod; fi
    { echo '//go:build tools'; echo; echo 'package tools'; echo; echo 'import ('
      for p in "$@"; do echo "	_ \"$p\""; done; echo ')'; } >tools.go
    go mod tidy >/dev/null 2>&1 || go mod tidy
    local tmp; tmp=$(mktemp -d "$TOOLS/.build-XXXXXX")
    # shellcheck disable=SC2086 # BUILD is a list of import paths
    go build -trimpath -ldflags="$ldflags" -o "$tmp/" ${BUILD:-"$@"} || { rm -rf "$tmp"; exit 1; }
    mkdir -p "$BIN"; mv "$tmp"/* "$BIN"/; rm -rf "$tmp"
  )
}

install() {
  local t
  command -v openssl >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null; }
  if [ ! -x "$BIN/etcd" ]; then
    t=$(now)
    # `go install go.etcd.io/etcd/server/v3@...` is refused (its go.mod has replace directives).
    REPLACES="" BUILD="" wrapper "$TOOLS/.src/etcd" "go.etcd.io/etcd/server/v3 $ETCD_VERSION" "-s -w" go.etcd.io/etcd/server/v3
    mv "$BIN/server" "$BIN/etcd" # the binary is named after .../server/v3
    log "built etcd $ETCD_VERSION ($(since "$t"))"
  fi
  # The upstream kubelet (for make bench-cluster) and kubeadm (for
  # test/kubeadm) are in the wrapper module always, so that adding them later
  # needs no new `go mod tidy`, but built only when asked for: `install
  # kubelet`, `install kubeadm`.
  local c cmds=() missing=() want=(kube-apiserver kube-scheduler kube-controller-manager kubectl) e2e="" e2e_test=""
  local e2e_node="" e2e_node_test="" node_src=$ROOT/test/conformance/_e2enode/e2enode_test.go kwok=""
  for c in "$@"; do
    case $c in
    kubelet | kubeadm) want+=("$c") ;;
    # The node conformance suite (test/conformance): e2e.test and the ginkgo
    # CLI, built in the same wrapper module (one build cache) only when asked.
    e2e) e2e=1 ;;
    # The trimmed suite for CI (FOCUS=ci): e2e-node.test, a package of the
    # wrapper module itself (e2enode/, copied from test/conformance/_e2enode)
    # that registers only test/e2e/common's specs.
    e2e-node) e2e_node=1 ;;
    kwok) kwok=1 ;;
    *) die "install: unknown extra '$c' (kubelet, kubeadm, e2e, e2e-node, kwok)" ;;
    esac
  done
  for c in kube-apiserver kube-scheduler kube-controller-manager kubectl kubelet kubeadm; do
    cmds+=("k8s.io/kubernetes/cmd/$c")
  done
  for c in "${want[@]}"; do
    [ -x "$BIN/$c" ] || missing+=("k8s.io/kubernetes/cmd/$c")
  done
  if [ -n "$e2e" ]; then
    # e2e.test's packages are imported by its _test.go file, which `go mod
    # tidy` does not follow in a dependency: tools.go imports them too.
    local kdir
    kdir=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
    # shellcheck disable=SC2207 # import paths have no spaces
    cmds+=($(sed -n '/^import (/,/^)/p' "$kdir/test/e2e/e2e_test.go" | grep -o '"k8s.io/kubernetes/[^"]*"' | tr -d '"' | sort -u)
      github.com/onsi/ginkgo/v2/ginkgo k8s.io/kubernetes/test/images/agnhost)
    [ -x "$BIN/agnhost" ] || missing+=(k8s.io/kubernetes/test/images/agnhost)
    # (ginkgo is rebuilt with e2e.test, from the cache: BUILD is never empty)
    [ -x "$BIN/ginkgo" ] && [ -x "$BIN/e2e.test" ] || { missing+=(github.com/onsi/ginkgo/v2/ginkgo); e2e_test=1; }
  fi
  if [ -n "$e2e_node" ]; then
    cmds+=(github.com/onsi/ginkgo/v2/ginkgo k8s.io/kubernetes/test/images/agnhost)
    [ -x "$BIN/agnhost" ] || missing+=(k8s.io/kubernetes/test/images/agnhost)
    # Built again when its source changed ($BIN/e2e-node.test.go: the copy it
    # was built from). The package is in the wrapper module before `go mod
    # tidy` runs there, so tidy keeps what its imports need.
    if ! { [ -x "$BIN/ginkgo" ] && [ -x "$BIN/e2e-node.test" ] && cmp -s "$node_src" "$BIN/e2e-node.test.go"; }; then
      mkdir -p "$TOOLS/.src/k8s/e2enode"
      cp "$node_src" "$TOOLS/.src/k8s/e2enode/e2enode_test.go"
      missing+=(github.com/onsi/ginkgo/v2/ginkgo); e2e_node_test=1
    fi
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    t=$(now)
    # k8s.io/kubernetes requires its staging modules at v0.0.0 with replaces to
    # ./staging, which the module zip lacks: point each at its release.
    local gomod replaces
    gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    replaces=$(sed -n '/^require/,/^)/p' "$gomod" | awk -v v="$STAGING_VERSION" '$1 ~ /^k8s.io\// && $2 == "v0.0.0" { printf "\t%s => %s %s\n", $1, $1, v }')
    local ld="-s -w" p
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=37 -X $p.gitTreeState=clean"
    done
    REPLACES="$replaces
" BUILD="${missing[*]}" wrapper "$TOOLS/.src/k8s" "k8s.io/kubernetes $K8S_VERSION" "$ld" "${cmds[@]}"
    log "built ${missing[*]##*/} $K8S_VERSION ($(since "$t"))"
    if [ -n "$e2e_test" ]; then
      t=$(now)
      (cd "$TOOLS/.src/k8s" && go test -c -trimpath -ldflags="$ld" -o "$BIN/.e2e.test.tmp" k8s.io/kubernetes/test/e2e)
      mv "$BIN/.e2e.test.tmp" "$BIN/e2e.test"
      log "built e2e.test $K8S_VERSION ($(since "$t"))"
    fi
    if [ -n "$e2e_node_test" ]; then
      t=$(now)
      (cd "$TOOLS/.src/k8s" && go test -c -trimpath -ldflags="$ld" -o "$BIN/.e2e-node.test.tmp" ./e2enode)
      mv "$BIN/.e2e-node.test.tmp" "$BIN/e2e-node.test"
      cp "$node_src" "$BIN/e2e-node.test.go"
      log "built e2e-node.test $K8S_VERSION ($(since "$t"))"
    fi
  fi
  # metrics-server, which the e2e tests run against the node agents (it is a
  # plain module: go install works).
  if [ ! -x "$METRICS_SERVER" ]; then
    t=$(now)
    GOBIN=$(dirname "$METRICS_SERVER") go install -trimpath -ldflags="-s -w" "sigs.k8s.io/metrics-server/cmd/metrics-server@$METRICS_SERVER_VERSION"
    log "built metrics-server $METRICS_SERVER_VERSION ($(since "$t"))"
  fi
  # KWOK (make bench-fleet), a plain module too, and stages.yaml: its fast
  # node stage, the node heartbeat with a Lease and the fast pod stages, as
  # the module ships them (kustomize/stage/...), one YAML stream for --config.
  if [ -n "$kwok" ] && [ ! -x "$KWOK" ]; then
    t=$(now)
    GOBIN=$(dirname "$KWOK") go install -trimpath -ldflags="-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
    local kwok_dir s
    kwok_dir=$(go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
    for s in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
      pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
      echo ---; cat "$kwok_dir/kustomize/stage/$s.yaml"
    done >"$(dirname "$KWOK")/stages.yaml"
    log "built kwok $KWOK_VERSION ($(since "$t"))"
  fi
}

certs() {
  mkdir -p "$PKI"
  chmod 0700 "$PREFIX" "$PKI"
  (
    cd "$PKI"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 365 -subj /CN=actorlet-test-ca 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj /CN=kube-apiserver 2>/dev/null
    printf '%s\n' basicConstraints=CA:FALSE keyUsage=digitalSignature,keyEncipherment extendedKeyUsage=serverAuth \
      subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 365 -extfile apiserver.ext 2>/dev/null
    # The apiserver's client certificate towards kubelets (kubectl logs,
    # exec; metrics through the proxy): the node agents trust ca.crt.
    openssl req -newkey rsa:2048 -nodes -keyout apiserver-kubelet-client.key -out apiserver-kubelet-client.csr \
      -subj "/O=system:masters/CN=kube-apiserver-kubelet-client" 2>/dev/null
    printf '%s\n' basicConstraints=CA:FALSE keyUsage=digitalSignature,keyEncipherment extendedKeyUsage=clientAuth >client.ext
    openssl x509 -req -in apiserver-kubelet-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -out apiserver-kubelet-client.crt -days 365 -extfile client.ext 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    echo "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'),admin,admin-uid,system:masters" >tokens.csv
    local n
    for n in $NODES; do
      echo "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'),system:node:$n,node-$n-uid,system:nodes" >>tokens.csv
    done
    # The bootstrap RBAC binds these user names to the components' roles.
    for n in kube-scheduler kube-controller-manager; do
      echo "$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'),system:$n,$n-uid" >>tokens.csv
    done
    chmod 0600 ./*.key tokens.csv
  )
  kubeconfig "$PREFIX/scheduler.kubeconfig" "$(token system:kube-scheduler)"
  kubeconfig "$PREFIX/controller-manager.kubeconfig" "$(token system:kube-controller-manager)"
}

# token USER prints USER's token from tokens.csv.
token() { awk -F, -v u="$1" '$2 == u { print $1 }' "$PKI/tokens.csv"; }

# kubeconfig FILE TOKEN
kubeconfig() {
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$PKI/ca.crt"}
users:
- name: user
  user: {token: "$2"}
contexts:
- name: test
  context: {cluster: test, user: user}
current-context: test
EOF
  chmod 0600 "$1"
}

pidof_() { cat "$PREFIX/$1.pid" 2>/dev/null || true; }
alive() { local p; p=$(pidof_ "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

# wait_for WHAT SECONDS CMD...
wait_for() {
  local what=$1 secs=$2 deadline; shift 2
  deadline=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || die "$what not ready in $secs s"
    sleep 0.1
  done
}

# healthy NAME PORT waits for the /healthz of the component started as NAME
# (pid file, log) to answer on https://127.0.0.1:PORT; dies with its log if it
# exits or does not get there in 60 s.
healthy() {
  local deadline=$(( $(date +%s) + 60 ))
  until curl -fsk "https://127.0.0.1:$2/healthz" >/dev/null 2>&1; do
    alive "$1" || DIE_LOGS=$1 die "$1 exited (port $2)"
    [ "$(date +%s)" -lt "$deadline" ] || DIE_LOGS=$1 die "$1 not healthy on https://127.0.0.1:$2/healthz in 60 s"
    sleep 0.1
  done
}

# start_apiserver starts kube-apiserver on the running etcd and waits until
# it is ready.
start_apiserver() {
  # --endpoint-reconciler-type=none: the apiserver refuses a loopback advertise
  # address with the default reconciler.
  "$BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$API_PORT" \
    --endpoint-reconciler-type=none \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" --client-ca-file="$PKI/ca.crt" \
    --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 --token-auth-file="$PKI/tokens.csv" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --disable-admission-plugins=ServiceAccount --allow-privileged=true \
    ${APISERVER_INFLIGHT:+--max-requests-inflight="$APISERVER_INFLIGHT" --max-mutating-requests-inflight="$((APISERVER_INFLIGHT / 2))"} \
    --cert-dir="$PREFIX/apiserver-certs" >>"$PREFIX/logs/apiserver.log" 2>&1 &
  echo $! >"$PREFIX/apiserver.pid"
  wait_for kube-apiserver 120 curl -fsk -H "Authorization: Bearer $(token admin)" "https://127.0.0.1:$API_PORT/readyz"
}

up() {
  local t; t=$(now)
  alive apiserver && die "a control plane runs already under $PREFIX: run down first"
  install
  mkdir -p "$PREFIX/logs"
  certs
  rm -rf "$PREFIX/etcd"
  "$BIN/etcd" --name test --data-dir "$PREFIX/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "test=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync --log-level warn \
    ${ETCD_QUOTA:+--quota-backend-bytes "$ETCD_QUOTA"} \
    >"$PREFIX/logs/etcd.log" 2>&1 &
  echo $! >"$PREFIX/etcd.pid"
  wait_for etcd 30 curl -fs "http://127.0.0.1:$ETCD_PORT/health"
  start_apiserver
  local admin; admin=$(token admin)
  kubeconfig "$PREFIX/admin.kubeconfig" "$admin"
  local n tok
  for n in $NODES; do
    tok=$(token "system:node:$n")
    kubeconfig "$PREFIX/$n.kubeconfig" "$tok"
  done
  wait_for "namespace kube-node-lease" 60 "$BIN/kubectl" --kubeconfig "$PREFIX/admin.kubeconfig" get namespace kube-node-lease
  # Both serve /healthz (self-signed, in memory) on 127.0.0.1 only and check
  # other requests against the apiserver (TokenReview, SubjectAccessReview).
  # --authentication-skip-lookup: the apiserver has no --requestheader-client-ca-file,
  # and reading kube-system/extension-apiserver-authentication would log
  # "missing content for CA bundle" errors for ever; client certificates are
  # checked against ca.crt instead.
  local k=$PREFIX/scheduler.kubeconfig
  local auth=(--authentication-skip-lookup=true --client-ca-file="$PKI/ca.crt")
  local qps=()
  if [ -n "$CONTROL_PLANE_QPS" ]; then qps=(--kube-api-qps="$CONTROL_PLANE_QPS" --kube-api-burst="$((CONTROL_PLANE_QPS * 2))"); fi
  "$BIN/kube-scheduler" --kubeconfig="$k" --authentication-kubeconfig="$k" --authorization-kubeconfig="$k" "${auth[@]}" ${qps[@]+"${qps[@]}"} \
    --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --leader-elect=false \
    >"$PREFIX/logs/scheduler.log" 2>&1 &
  echo $! >"$PREFIX/scheduler.pid"
  # --use-service-account-credentials: each controller acts as its own service
  # account in kube-system (tokens from the TokenRequest API, signed with
  # sa.key), bound by the bootstrap RBAC to its system:controller:<name> role;
  # system:kube-controller-manager itself may only read (list/watch) and
  # manage service accounts, so with =false the deployment controller could not
  # create a ReplicaSet. The ServiceAccount admission plugin stays off: pods get
  # no token volume.
  k=$PREFIX/controller-manager.kubeconfig
  "$BIN/kube-controller-manager" --kubeconfig="$k" --authentication-kubeconfig="$k" --authorization-kubeconfig="$k" "${auth[@]}" ${qps[@]+"${qps[@]}"} \
    --bind-address=127.0.0.1 --secure-port="$CONTROLLER_MANAGER_PORT" --leader-elect=false \
    --controllers="$CONTROLLERS" --use-service-account-credentials=true \
    --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
    >"$PREFIX/logs/controller-manager.log" 2>&1 &
  echo $! >"$PREFIX/controller-manager.pid"
  healthy scheduler "$SCHEDULER_PORT"
  healthy controller-manager "$CONTROLLER_MANAGER_PORT"
  cat >"$PREFIX/env" <<EOF
export ACTORLET_CLUSTER_ENV=$ROOT/test/e2e/cluster.sh
export ACTORLET_CLUSTER_PREFIX=$PREFIX
export ACTORLET_ADMIN_KUBECONFIG=$PREFIX/admin.kubeconfig
export ACTORLET_NODE_KUBECONFIGS=$PREFIX
export ACTORLET_KUBECTL=$BIN/kubectl
# The directory of the Kubernetes binaries (the kubelet too after "install kubelet").
export ACTORLET_K8S_BIN=$BIN
# kube-scheduler and kube-controller-manager run: workloads get scheduled.
export ACTORLET_CLUSTER_CONTROLLERS=1
# The CA of the apiserver's client certificate towards node agents
# (their --client-ca-file).
export ACTORLET_CLUSTER_CA=$PKI/ca.crt
# metrics-server, for the tests to run against the nodes.
export ACTORLET_METRICS_SERVER=$METRICS_SERVER
# KWOK and its stages (after "install kwok").
export ACTORLET_KWOK=$KWOK
EOF
  log "up ($(since "$t")): kube-apiserver $K8S_VERSION on https://127.0.0.1:$API_PORT," \
    "kube-scheduler on :$SCHEDULER_PORT, kube-controller-manager on :$CONTROLLER_MANAGER_PORT; set -a; . $PREFIX/env; set +a"
}

stop_() {
  local p; p=$(pidof_ "$1")
  [ -n "$p" ] || return 0
  if kill -0 "$p" 2>/dev/null; then
    kill "$p"
    local deadline=$(( $(date +%s) + 20 ))
    while kill -0 "$p" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
    kill -0 "$p" 2>/dev/null && kill -9 "$p"
  fi
  rm -f "$PREFIX/$1.pid"
}

down() {
  stop_ controller-manager
  stop_ scheduler
  stop_ apiserver
  stop_ etcd
  rm -rf "$PREFIX/etcd" "$PREFIX/env"
  log "down"
}

status() {
  local c up=() dead=()
  for c in etcd apiserver scheduler controller-manager; do
    if alive "$c"; then up+=("$c"); else dead+=("$c"); fi
  done
  if [ ${#dead[@]} -eq 0 ]; then echo "up: https://127.0.0.1:$API_PORT"; return; fi
  if [ ${#up[@]} -eq 0 ]; then echo down; else echo "partly up: ${up[*]} running, ${dead[*]} not"; fi
  return 1
}

case $CMD in
install) shift; install "$@" ;;
up) up ;;
down) down ;;
# The fault tests stop the API server and start it again (etcd keeps the data).
stop-apiserver) stop_ apiserver ;;
start-apiserver)
  alive apiserver && die "kube-apiserver runs already"
  start_apiserver
  ;;
status) status || exit 1 ;; # not up is an answer, not a failure for the ERR trap
*) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# The upstream node conformance suite (k8s.io/kubernetes v1.37.2 test/e2e,
# e2e.test) against one node, actorlet or the upstream kubelet v1.37.2, on
# this machine only: containerd + runc from test/e2e/env.sh, etcd,
# kube-apiserver, kube-scheduler and kube-controller-manager from
# test/e2e/cluster.sh, the node's address the CNI bridge's gateway (created
# here before the node starts; never the host's own address).
#
#   test/conformance/run.sh all      build, images, up, run, summary, down (down also on failure)
#   test/conformance/run.sh build    e2e.test (SUITE=full; e2e-node.test with SUITE=node), ginkgo and
#                                    agnhost (cluster.sh install e2e or e2e-node, cached) and the
#                                    upstream kubelet with NODE=kubelet (cluster.sh install kubelet)
#   test/conformance/run.sh images   the test images as docker archives under $TOOLS/conformance-images-v1.37.2
#   test/conformance/run.sh up       env.sh up, the bridge and its gateway, the images imported,
#                                    cluster.sh up, the node; waits for it to be Ready
#   test/conformance/run.sh run      e2e.test with FOCUS and SKIP, the JUnit report under RESULTS
#   test/conformance/run.sh summary [DIR]
#                                    passed/failed/skipped and every failure's name (exit 1 if one failed)
#   test/conformance/run.sh down     the node, cluster.sh down, env.sh down
#
# Environment: NODE (actorlet | kubelet), FOCUS (default '\[NodeConformance\]'; 'small': 6 specs; 'ci': the
# fixed list CI runs, every spec of it must pass), SKIP (default
# '\[Serial\]|\[Disruptive\]|\[Flaky\]|\[Slow\]|\[Feature:|\[Alpha\]'), SUITE (full: e2e.test, every area
# of test/e2e; node: e2e-node.test, test/e2e/common's specs only, test/conformance/_e2enode; default node
# with FOCUS=ci or small, full otherwise), PROCS (ginkgo processes,
# default 1: e2e.test alone), RESULTS (default _out/conformance/<node>-<time>), and those of
# env.sh and cluster.sh: ACTORLET_E2E_PREFIX, ACTORLET_E2E_BRIDGE, ACTORLET_E2E_SUBNET,
# ACTORLET_CLUSTER_PREFIX, ACTORLET_*_PORT, ACTORLET_TOOLS. ACTORLET_CONFORMANCE_NODE_PORT: the
# node's API port on the gateway address (default 10250).
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export GOFLAGS=-buildvcs=false
ENV_SH=$ROOT/test/e2e/env.sh
CLUSTER_SH=$ROOT/test/e2e/cluster.sh
TOOLS=${ACTORLET_TOOLS:-/var/cache/actorlet-tools}
E2E_PREFIX=${ACTORLET_E2E_PREFIX:-/tmp/actorlet-e2e}
CLUSTER_PREFIX=${ACTORLET_CLUSTER_PREFIX:-/tmp/actorlet-cluster}
SUBNET=${ACTORLET_E2E_SUBNET:-10.88.91.0/24}
BRIDGE=${ACTORLET_E2E_BRIDGE:-actorletcni0}
K8S_VERSION=v1.37.2
KBIN=$TOOLS/k8s-$K8S_VERSION
IMAGES=$TOOLS/conformance-images-$K8S_VERSION
# agnhost as test/utils/image/manifest.go of v1.37.2 names it (Agnhost), and its AgnhostPrev
# name, a tag of the same local image (see up).
AGNHOST_REF=registry.k8s.io/e2e-test-images/agnhost:2.66.1
AGNHOST_PREV_REF=registry.k8s.io/e2e-test-images/agnhost:2.55
NODE=${NODE:-actorlet}
NODE_NAME=conformance-node
NODE_PORT=${ACTORLET_CONFORMANCE_NODE_PORT:-10250}
# The node's address: the gateway of the CNI bridge (the first address of the subnet).
NODE_IP=$(echo "$SUBNET" | awk -F'[./]' '{ printf "%d.%d.%d.%d", $1, $2, $3, $4 + 1 }')
STATE=$CLUSTER_PREFIX/conformance # the node's files, pid, logs
# FOCUS=small: a few specs (a pod's host IP, termination messages, emptyDir
# modes, an exec liveness probe): the harness's smoke test, a few minutes.
SMALL_FOCUS='Pods should get a host IP|Container Runtime blackbox test on terminated container should report termination message if TerminationMessagePath is set|EmptyDir volumes should support \(non-root,0644,tmpfs\)|EmptyDir volumes volume on default medium should have the correct mode|Probing container should be restarted with a exec "cat /tmp/health" liveness probe'
# FOCUS=ci: what .ci/run runs on every submission (34 specs, about 3 minutes
# with PROCS=2), test/e2e/common [NodeConformance] specs that pass against
# actorlet: logs and termination messages of finished containers, emptyDir,
# secret, configMap and downward API volumes, liveness, readiness and startup
# probes, lifecycle hooks (http and sleep; the exec hooks run curl, which this
# harness's agnhost image lacks), init containers, and two in-place resizes of
# a Guaranteed pod's containers (Pod InPlace Resize Container). Each entry
# names exactly one spec; all must run and pass.
CI_SPECS=(
  # logs and termination messages of finished containers
  'Container Runtime blackbox test on terminated container should report termination message if TerminationMessagePath is set \[NodeConformance\]'
  'Container Runtime blackbox test on terminated container should report termination message from log output if TerminationMessagePolicy FallbackToLogsOnError is set'
  'Container Runtime blackbox test on terminated container should report termination message as empty when pod succeeds'
  'Container Runtime blackbox test when starting a container that exits should run with the expected status'
  'Kubelet when scheduling a busybox command in a pod should print the output to logs'
  'Kubelet when scheduling a busybox command that always fails in a pod should have an terminated reason'
  'Pods should get a host IP'
  'Pods should support retrieving logs from the container over websockets'
  # volumes
  'EmptyDir volumes should support \(non-root,0644,tmpfs\)'
  'EmptyDir volumes volume on default medium should have the correct mode'
  'Secrets should be consumable from pods in volume \[Conformance\]'
  'ConfigMap should be consumable from pods in volume \[Conformance\]'
  'Downward API volume should provide podname only'
  # probes
  'Probing container should be restarted with a exec "cat /tmp/health" liveness probe'
  'Probing container should be restarted with a /healthz http liveness probe'
  'Probing container with readiness probe should not be ready before initial delay and never restart'
  'Probing container should be ready immediately after startupProbe succeeds'
  # lifecycle hooks
  'sig-node\] Container Lifecycle Hook when create a pod with lifecycle hook should execute poststart http hook properly'
  'sig-node\] Container Lifecycle Hook when create a pod with lifecycle hook should execute prestop http hook properly'
  'Restartable Init Container Lifecycle Hook when create a pod with lifecycle hook should execute poststart http hook properly'
  'Lifecycle Sleep Hook when create a pod with lifecycle hook using sleep action valid prestop hook using sleep action'
  'Lifecycle sleep action zero value .* prestop hook using sleep action with zero duration'
  # init containers
  'InitContainer should invoke init containers on a RestartNever pod'
  'InitContainer should invoke init containers on a RestartAlways pod'
  'InitContainer should not start app containers and fail the pod if init containers fail on a RestartNever pod'
  # ephemeral containers
  'Ephemeral Containers will start an ephemeral container in an existing pod'
  'Ephemeral Containers should update the ephemeral containers in an existing pod'
  # container restart rules (beta)
  'Container Restart Rules should restart container on rule match'
  'Container Restart Rules should not restart container on rule mismatch, container restart policy Never'
  'Container Restart Rules should restart container on container-level restart policy Never'
  'Container Restart Rules should restart container on container-level restart policy Always'
  'Container Restart Rules should restart container on pod-level restart policy Always when no container-level restart policy'
  # in-place resize of CPU and memory
  'Pod InPlace Resize Container guaranteed pods with multiple containers 3 containers - increase cpu & mem on c1, c2, decrease cpu & mem on c3 - net increase'
  'Pod InPlace Resize Container guaranteed pods with multiple containers 3 containers - increase cpu & mem on c1, decrease cpu & mem on c2, c3 - net decrease'
)
FOCUS=${FOCUS:-'\[NodeConformance\]'}
FOCUS_NAME=$FOCUS
case $FOCUS in
small) FOCUS=$SMALL_FOCUS ;;
ci) FOCUS=$(IFS='|'; echo "${CI_SPECS[*]}") ;;
esac
case $FOCUS_NAME in ci | small) SUITE=${SUITE:-node} ;; *) SUITE=${SUITE:-full} ;; esac
case $SUITE in
full) E2E_TEST=e2e.test E2E_EXTRA=e2e ;;
node) E2E_TEST=e2e-node.test E2E_EXTRA=e2e-node ;;
*) echo "SUITE is full or node, not '$SUITE'" >&2; exit 2 ;;
esac
SKIP=${SKIP:-'\[Serial\]|\[Disruptive\]|\[Flaky\]|\[Slow\]|\[Feature:|\[Alpha\]'}
PROCS=${PROCS:-1}
CMD=${1:-}
[ $# -gt 0 ] && shift

log() { echo "conformance $(date +%T) $*" >&2; }
die() { trap - ERR; log "FAILED: $*"; exit 1; }
trap 'die "line $LINENO: \`$BASH_COMMAND\` exited with $?"' ERR

build() {
  local t extras=("$E2E_EXTRA")
  t=$(date +%s)
  [ "$NODE" = kubelet ] && extras+=(kubelet)
  "$CLUSTER_SH" install "${extras[@]}"
  log "tools present ($(( $(date +%s) - t )) s): $(cd "$KBIN" && ls | tr '\n' ' ')"
}

# ------------------------------------------------------------------------------------- images
# busybox_rootfs DIR: Debian's busybox-static with every applet as a symlink
# (as in the busybox image), its users and groups, /tmp 1777.
busybox_rootfs() {
  local r=$1 deb a debs
  debs=("$IMAGES"/debs/busybox-static_*.deb)
  if [ ! -e "${debs[0]}" ]; then
    mkdir -p "$IMAGES/debs"
    (cd "$IMAGES/debs" && apt-get download busybox-static 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
    debs=("$IMAGES"/debs/busybox-static_*.deb)
    [ -e "${debs[0]}" ] || die "apt-get download busybox-static gave no package"
  fi
  deb=${debs[0]}
  rm -rf "$r"; mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,etc,root,home,tmp,var/www,proc,sys,dev}
  chmod 1777 "$r/tmp"; chmod 0700 "$r/root"
  dpkg-deb --fsys-tarfile "$deb" | tar -xO ./bin/busybox >"$r/bin/busybox"; chmod 0755 "$r/bin/busybox"
  for a in $("$r/bin/busybox" --list-full); do
    [ -e "$r/$a" ] || ln -s /bin/busybox "$r/$a"
  done
  printf '%s\n' root:x:0:0:root:/root:/bin/sh daemon:x:1:1:daemon:/usr/sbin:/bin/false \
    www-data:x:33:33:www-data:/var/www:/bin/false nobody:x:65534:65534:nobody:/home:/bin/false >"$r/etc/passwd"
  printf '%s\n' root:x:0: daemon:x:1: www-data:x:33: users:x:100: nogroup:x:65534: >"$r/etc/group"
  printf 'hosts: files dns\n' >"$r/etc/nsswitch.conf"
}

# images: pause, busybox, nonroot and agnhost under the names
# test/utils/image/manifest.go gives for v1.37.2, made with the project's
# test/images/mkimage (no registry, no docker); cached: made again only when
# one is missing.
images() {
  local t mk r work want=(pause busybox nonroot agnhost) i missing=""
  for i in "${want[@]}"; do [ -s "$IMAGES/$i.tar" ] || missing=1; done
  [ -n "$missing" ] || { log "images present in $IMAGES"; return; }
  t=$(date +%s)
  [ -x "$KBIN/agnhost" ] || die "no $KBIN/agnhost: run build first"
  work=$(mktemp -d "$TOOLS/.conformance-images-XXXXXX")
  mk=$work/mkimage
  (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$mk" ./test/images/mkimage)
  (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$work/pause" ./test/images/pause)
  mkdir -p "$IMAGES"
  # registry.k8s.io/pause: actorlet's test/images/pause (PID 1, reaps, exits on SIGTERM)
  "$mk" -ref registry.k8s.io/pause:3.10.2 -out "$work/pause.tar" -entrypoint /pause -user 65535:65535 "/pause=$work/pause"
  r=$work/busybox; busybox_rootfs "$r"
  "$mk" -ref registry.k8s.io/e2e-test-images/busybox:1.37.0-2 -out "$work/busybox.tar" -rootfs "$r" -cmd sh
  "$mk" -ref registry.k8s.io/e2e-test-images/nonroot:1.5 -out "$work/nonroot.tar" -rootfs "$r" -cmd sh -user 1234
  # agnhost: busybox + the agnhost binary (alpine + agnhost in the original)
  r=$work/agnhost; busybox_rootfs "$r"
  install -m 0755 "$KBIN/agnhost" "$r/agnhost"; ln -s agnhost "$r/agnhost-2"
  "$mk" -ref "$AGNHOST_REF" -out "$work/agnhost.tar" -rootfs "$r" \
    -entrypoint /agnhost -cmd pause
  for i in "${want[@]}"; do mv "$work/$i.tar" "$IMAGES/$i.tar"; done
  rm -rf "$work"
  log "made images ${want[*]} in $IMAGES ($(( $(date +%s) - t )) s)"
}

# ------------------------------------------------------------------------------------ up / down
# containerd (env.sh) and the node run in one private mount namespace, kept by
# a bind mount of its ns file at $NS: every mount they make (rootfs overlays,
# emptyDir and secret tmpfs, netns) stays out of the host's table and goes
# with it at down. In it /var/lib and /var/log are tmpfs (the kubelet's
# hard-coded /var/lib/kubelet/device-plugins and /var/log/containers land
# there), and the /proc/sys files the kubelet's protectKernelDefaults check
# reads are bind-mounted copies with the values it wants, so that it neither
# rewrites the host's sysctls nor refuses to start.
NS=$CLUSTER_PREFIX/conformance.mntns
in_ns() { nsenter --mount="$NS" -- "$@"; }
setup_ns() {
  local d=$CLUSTER_PREFIX/conformance.sysctl f v
  grep -q " $NS " /proc/mounts && return
  mkdir -p "$d"; touch "$NS"
  unshare --mount="$NS" --propagation private true
  in_ns mount -t tmpfs -o mode=0755 conformance-varlib /var/lib
  in_ns mount -t tmpfs -o mode=0755 conformance-varlog /var/log
  for f in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 \
    kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
    v=${f#*=}; f=${f%=*}
    printf '%s\n' "$v" >"$d/${f//\//_}"
    in_ns mount --bind "$d/${f//\//_}" "/proc/sys/$f"
  done
  log "mount namespace $NS"
}

node_alive() { local p; p=$(cat "$STATE/node.pid" 2>/dev/null) && kill -0 "$p" 2>/dev/null; }

start_actorlet() {
  (cd "$ROOT" && go build -o "$STATE/actorlet" ./cmd/actorlet)
  (cd "$ROOT" && git log -1 --format='actorlet %h %cd' >"$STATE/node.version" 2>/dev/null) || true
  mkdir -p "$STATE/root" "$STATE/pod-logs"
  nohup nsenter --mount="$NS" -- "$STATE/actorlet" run --kubeconfig "$CLUSTER_PREFIX/$NODE_NAME.kubeconfig" --hostname-override "$NODE_NAME" \
    --container-runtime-endpoint "unix://$E2E_PREFIX/containerd.sock" --root-dir "$STATE/root" --pod-logs-dir "$STATE/pod-logs" \
    --node-ip "$NODE_IP" --address "$NODE_IP" --port "$NODE_PORT" --healthz-port 0 \
    --client-ca-file "$CLUSTER_PREFIX/pki/ca.crt" --cluster-dns "$NODE_IP" --cluster-domain cluster.local \
    ${ACTORLET_CONFORMANCE_FLAGS:-} >"$STATE/node.log" 2>&1 </dev/null &
  echo $! >"$STATE/node.pid"
}

# The upstream kubelet v1.37.2 as root on the same containerd, with the same
# name, address, port and DNS settings; cgroupfs, no QoS cgroups (actorlet's
# default too); webhook authentication and authorization as kubeadm sets it.
start_kubelet() {
  mkdir -p "$STATE"/{root,certs,plugins,pod-logs}
  cat >"$STATE/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $NODE_PORT
readOnlyPort: 0
healthzPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$CLUSTER_PREFIX/pki/ca.crt"}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://$E2E_PREFIX/containerd.sock
podLogsDir: $STATE/pod-logs
clusterDNS: ["$NODE_IP"]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
protectKernelDefaults: true
serializeImagePulls: false
EOF
  "$KBIN/kubelet" --version >"$STATE/node.version"
  nohup nsenter --mount="$NS" -- "$KBIN/kubelet" --config="$STATE/config.yaml" --kubeconfig="$CLUSTER_PREFIX/$NODE_NAME.kubeconfig" \
    --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --root-dir="$STATE/root" --cert-dir="$STATE/certs" \
    --volume-plugin-dir="$STATE/plugins" --v=2 >"$STATE/node.log" 2>&1 </dev/null &
  echo $! >"$STATE/node.pid"
}

kubectl_() { "$KBIN/kubectl" --kubeconfig "$CLUSTER_PREFIX/admin.kubeconfig" "$@"; }

wait_ready() {
  local s="" deadline=$(( $(date +%s) + 180 ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    s=$(kubectl_ get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)
    [ "$s" = True ] && { log "node $NODE_NAME Ready ($NODE, $NODE_IP:$NODE_PORT)"; return; }
    node_alive || { tail -30 "$STATE/node.log" >&2; die "the $NODE node exited"; }
    sleep 1
  done
  tail -30 "$STATE/node.log" >&2
  die "node $NODE_NAME not Ready in 180 s"
}

up() {
  local i msg
  node_alive && die "a node runs already (pid $(cat "$STATE/node.pid")): run down first"
  [ -s "$IMAGES/busybox.tar" ] || die "no images in $IMAGES: run images first"
  setup_ns
  in_ns "$ENV_SH" up
  # The bridge and its gateway address before the node starts (the CNI bridge
  # plugin takes both as they are): the node's own address, on this machine.
  ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  ip -4 addr show dev "$BRIDGE" | grep -q "inet $NODE_IP/" || ip addr add "$NODE_IP/${SUBNET#*/}" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  for i in pause busybox nonroot agnhost; do
    msg=$(. "$E2E_PREFIX/env"; "$ACTORLET_CTR" -a "$E2E_PREFIX/containerd.sock" -n k8s.io images import "$IMAGES/$i.tar" 2>&1) ||
      die "ctr images import $IMAGES/$i.tar: $msg"
  done
  # agnhost:2.55 (AgnhostPrev of test/utils/image/manifest.go, which "Pods should run through the
  # lifecycle of Pods and PodStatus" and the kubectl and statefulset fixtures ask for) is the
  # same local image under a second name: every image is local, nothing is pulled.
  msg=$(. "$E2E_PREFIX/env"; "$ACTORLET_CTR" -a "$E2E_PREFIX/containerd.sock" -n k8s.io images tag --force \
    "$AGNHOST_REF" "$AGNHOST_PREV_REF" 2>&1) || die "ctr images tag $AGNHOST_REF $AGNHOST_PREV_REF: $msg"
  log "imported pause, busybox, nonroot, agnhost from $IMAGES; agnhost also tagged ${AGNHOST_PREV_REF##*/}"
  # Every controller (the e2e framework waits for each namespace's default
  # service account; kube-root-ca.crt, endpoints, ...), one node identity.
  ACTORLET_CLUSTER_NODES=$NODE_NAME ACTORLET_CONTROLLERS='*' "$CLUSTER_SH" up
  rm -rf "$STATE"; mkdir -p "$STATE"
  case $NODE in
  actorlet) start_actorlet ;;
  kubelet)
    [ -x "$KBIN/kubelet" ] || die "no $KBIN/kubelet: run build with NODE=kubelet"
    start_kubelet ;;
  *) die "NODE is actorlet or kubelet, not '$NODE'" ;;
  esac
  wait_ready
}

down() {
  local p
  if node_alive; then
    p=$(cat "$STATE/node.pid"); kill "$p"
    for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  fi
  rm -f "$STATE/node.pid"
  "$CLUSTER_SH" down || true
  if grep -q " $NS " /proc/mounts; then
    in_ns "$ENV_SH" down || true
    umount "$NS" && rm -f "$NS"
  else
    "$ENV_SH" down || true
  fi
  log "down"
}

# -------------------------------------------------------------------------------------------- run
run_e2e() {
  local res t rc=0
  [ -x "$KBIN/$E2E_TEST" ] || die "no $KBIN/$E2E_TEST: run build first (SUITE=$SUITE)"
  node_alive || die "no node running: run up first"
  res=${RESULTS:-$ROOT/_out/conformance/$NODE-$(date -u +%Y%m%d-%H%M%S)}
  mkdir -p "$res"
  cp "$STATE/node.version" "$res/" 2>/dev/null || true
  local args=(--provider=local --kubeconfig="$CLUSTER_PREFIX/admin.kubeconfig" --report-dir="$res" --e2e-output-dir="$res")
  t=$(date +%s)
  if [ "$PROCS" -gt 1 ]; then
    (cd "$res" && "$KBIN/ginkgo" --procs="$PROCS" --no-color --output-dir="$res" --junit-report=junit.xml \
      "--focus=$FOCUS" "--skip=$SKIP" --timeout=4h "$KBIN/$E2E_TEST" -- "${args[@]}" "$@") >"$res/e2e.log" 2>&1 || rc=$?
  else
    (cd "$res" && "$KBIN/$E2E_TEST" "${args[@]}" "--ginkgo.focus=$FOCUS" "--ginkgo.skip=$SKIP" --ginkgo.no-color \
      --ginkgo.junit-report="$res/junit.xml" --ginkgo.timeout=4h "$@") >"$res/e2e.log" 2>&1 || rc=$?
  fi
  printf 'node %s; focus %s; skip %s; procs %s; %s s; %s exit %s\n' "$NODE" "$FOCUS" "$SKIP" "$PROCS" "$(( $(date +%s) - t ))" "$E2E_TEST" "$rc" | tee "$res/run" >&2
  cp "$STATE/node.log" "$res/node.log" 2>/dev/null || true
  local out
  out=$(summary "$res") || { echo "$out"; die "failed specs (report in $res)"; }
  echo "$out"
  # FOCUS=ci: every listed spec ran and passed (a renamed spec would
  # otherwise drop out unnoticed), and the suite itself exited 0.
  if [ "$FOCUS_NAME" = ci ]; then
    grep -q "^passed ${#CI_SPECS[@]}, failed 0, " <<<"$out" ||
      die "FOCUS=ci: ${#CI_SPECS[@]} specs should have passed (report in $res)"
    [ "$rc" = 0 ] || die "FOCUS=ci: $E2E_TEST exited $rc (log $res/e2e.log)"
  fi
}

summary() {
  local res=${1:-$(ls -dt "$ROOT"/_out/conformance/*/ | head -1)}
  (cd "$ROOT" && go run ./test/conformance/junitsum "$res/junit.xml")
}

case $CMD in
build) build ;;
images) images ;;
up) up ;;
run) run_e2e "$@" ;;
summary) summary "$@" ;;
down) down ;;
all)
  build
  images
  trap 'rc=$?; trap - ERR EXIT; down; exit $rc' EXIT
  up
  run_e2e "$@"
  ;;
*) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2; exit 2 ;;
esac

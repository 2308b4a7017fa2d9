#!/usr/bin/env bash
# The containerd environment of actorlet's end-to-end tests (run as root):
# containerd + runc + a CNI bridge with a private config, root, state and
# socket under $PREFIX, and the test images built from test/images and
# imported without a registry.
#
#   test/e2e/env.sh install           apt packages and Go-built binaries (cached: a rerun takes seconds)
#   test/e2e/env.sh up                install if needed, write the config, start containerd, build and
#                                     import the images, write $PREFIX/env (source it for the tests)
#   test/e2e/env.sh stop-containerd   stop containerd by its PID; pods keep running
#   test/e2e/env.sh start-containerd  start it again with the same config
#   test/e2e/env.sh down              remove all pods, stop containerd, unmount leftovers, delete the
#                                     bridge and leftover cgroups (safe when nothing is up)
#   test/e2e/env.sh status            says whether it is up (exit 0) or not (exit 1)
#
# Environment:
#   FLAVOR=upstream (default)  containerd v2.4.2 + runc v1.5.3 built from the Go module proxy
#   FLAVOR=debian              Debian's containerd 1.6 + runc 1.1 (no GetContainerEvents)
#   ACTORLET_E2E_PREFIX        where it all lives (default /tmp/actorlet-e2e)
#   ACTORLET_TOOLS             cache of built binaries (default /var/cache/actorlet-tools)
#   ACTORLET_CRICTL            a crictl to use instead of building v1.37.0
#   ACTORLET_E2E_BRIDGE, ACTORLET_E2E_SUBNET
#                              the CNI bridge (default actorletcni0, 10.88.91.0/24)
# `up` records its choices in $PREFIX/setup; the other commands act on those.
# Pitfalls found on these machines are noted where they are handled.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SELF=$ROOT/test/e2e/env.sh
export PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
PREFIX=${ACTORLET_E2E_PREFIX:-/tmp/actorlet-e2e}
TOOLS=${ACTORLET_TOOLS:-/var/cache/actorlet-tools}
CONTAINERD_VERSION=v2.4.2
RUNC_VERSION=v1.5.3
CRICTL_VERSION=v1.37.0
SOCK=$PREFIX/containerd.sock
SETUP=$PREFIX/setup
CNI_BIN=/usr/lib/cni # Debian's containernetworking-plugins, not /opt/cni/bin
PAUSE_IMAGE=localhost/actorlet/pause:1.0
WORKLOAD_IMAGE=localhost/actorlet/workload:1.0
# containerd (cgroupfs driver) puts pods that ask for no cgroup parent under /k8s.io/<id>.
CGROUP_PARENT=k8s.io
CMD=${1:-}

now() { date +%s%N; }
since() { echo "$(( ($(now) - $1) / 1000000 )) ms"; }
log() { echo "env.sh $(date +%T.%3N) [${FLAVOR:-?}] $*" >&2; }
containerd_log_tail() {
  if [ -s "$PREFIX/logs/containerd.log" ]; then
    echo "--- last lines of $PREFIX/logs/containerd.log:" >&2
    tail -n 25 "$PREFIX/logs/containerd.log" >&2
  fi
}
# die says why it fails (with containerd's last words once it was started) and exits 1.
die() {
  trap - ERR
  log "FAILED: $*"
  [ -z "${STARTED:-}" ] || containerd_log_tail
  exit 1
}
trap 'die "line $LINENO: \`$BASH_COMMAND\` exited with $?"' ERR

# choose sets FLAVOR, the bridge and the binaries: from the environment for
# install and up, from what `up` recorded for the commands that act on it.
choose() {
  if [ "$CMD" != install ] && [ "$CMD" != up ] && [ -f "$SETUP" ]; then
    # shellcheck source=/dev/null
    . "$SETUP"
    return
  fi
  FLAVOR=${FLAVOR:-upstream}
  BRIDGE=${ACTORLET_E2E_BRIDGE:-actorletcni0}
  SUBNET=${ACTORLET_E2E_SUBNET:-10.88.91.0/24}
  CRICTL=${ACTORLET_CRICTL:-$TOOLS/crictl-$CRICTL_VERSION}
  case $FLAVOR in
  upstream)
    SHIM_DIR=$TOOLS/containerd-$CONTAINERD_VERSION
    CONTAINERD=$SHIM_DIR/containerd CTR=$SHIM_DIR/ctr RUNC=$TOOLS/runc-$RUNC_VERSION/runc ;;
  debian)
    SHIM_DIR=/usr/bin CONTAINERD=/usr/bin/containerd CTR=/usr/bin/ctr RUNC=/usr/sbin/runc ;;
  *) echo "env.sh: FLAVOR must be upstream or debian, not '$FLAVOR'" >&2; exit 2 ;;
  esac
}

crictl_() { "$CRICTL" --config "$PREFIX/crictl.yaml" "$@"; }
pid() { cat "$PREFIX/containerd.pid" 2>/dev/null || true; }
# running tells whether the containerd of the PID file runs (and not some
# other process that got its PID).
running() {
  local p
  p=$(pid)
  [ -n "$p" ] && [[ "$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline")" == *"--config $PREFIX/config.toml "* ]]
}

# shims prints the PIDs of the runc shims serving our containerd.
shims() {
  pgrep -f -- "containerd-shim.* -address ${SOCK//./\\.}( |\$)" || true
}

# gobuild DIR ARGS... runs go install into a temporary directory and moves
# the binaries into DIR, so a cached binary is always a complete one.
gobuild() {
  local dir=$1 tmp; shift
  mkdir -p "$TOOLS"
  tmp=$(mktemp -d "$TOOLS/.build-XXXXXX")
  GOBIN=$tmp GOFLAGS=-buildvcs=false go install "$@" || { rm -rf "$tmp"; die "go install $*"; }
  mkdir -p "$dir"
  mv "$tmp"/* "$dir"/
  rm -rf "$tmp"
}

installed() {
  local f
  for f in "$CONTAINERD" "$CTR" "$RUNC" "$SHIM_DIR/containerd-shim-runc-v2" "$CRICTL" \
    "$CNI_BIN/bridge" "$CNI_BIN/host-local" "$CNI_BIN/portmap" "$CNI_BIN/loopback"; do
    [ -x "$f" ] || return 1
  done
  command -v iptables >/dev/null
}

install() {
  local t p missing=""
  t=$(now)
  local pkgs="containerd runc containernetworking-plugins iptables"
  [ "$FLAVOR" = upstream ] && pkgs="$pkgs libseccomp-dev pkg-config gcc"
  for p in $pkgs; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    # On a systemd host Debian's containerd package starts a system
    # containerd; ours has its own socket, root and state, so they never meet.
    apt-get update -qq || die "apt-get update"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null || die "apt-get install$missing"
    log "apt-get installed$missing ($(since "$t"))"
  fi
  if [ "$FLAVOR" = upstream ]; then
    if [ ! -x "$CONTAINERD" ] || [ ! -x "$CTR" ] || [ ! -x "$SHIM_DIR/containerd-shim-runc-v2" ]; then
      p=$(now)
      gobuild "$SHIM_DIR" -tags "no_btrfs no_devmapper no_zfs" \
        "github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION" \
        "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION" \
        "github.com/containerd/containerd/v2/cmd/ctr@$CONTAINERD_VERSION"
      log "built containerd $CONTAINERD_VERSION into $SHIM_DIR ($(since "$p"))"
    fi
    if [ ! -x "$RUNC" ]; then
      p=$(now)
      CGO_ENABLED=1 gobuild "$(dirname "$RUNC")" -tags seccomp "github.com/opencontainers/runc@$RUNC_VERSION"
      log "built runc $RUNC_VERSION into $(dirname "$RUNC") ($(since "$p"))"
    fi
  fi
  if [ ! -x "$CRICTL" ]; then
    [ -z "${ACTORLET_CRICTL:-}" ] || die "ACTORLET_CRICTL=$ACTORLET_CRICTL is not an executable"
    p=$(now)
    gobuild "$TOOLS/.crictl-$CRICTL_VERSION" "sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION"
    mv "$TOOLS/.crictl-$CRICTL_VERSION/crictl" "$CRICTL"
    rmdir "$TOOLS/.crictl-$CRICTL_VERSION"
    log "built crictl $CRICTL_VERSION ($(since "$p"))"
  fi
  log "installed: $("$CONTAINERD" --version | head -1); $("$RUNC" --version | head -1) ($(since "$t"))"
}

write_config() {
  mkdir -p "$PREFIX"/{root,state,runc,opt,cni/net.d,cni/ipam,logs,images}
  if [ "$FLAVOR" = upstream ]; then
    cat >"$PREFIX/config.toml" <<EOF
version = 3
root = "$PREFIX/root"
state = "$PREFIX/state"
[grpc]
  address = "$SOCK"
[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "$PAUSE_IMAGE"
  [plugins.'io.containerd.cri.v1.runtime']
    enable_selinux = false
    disable_apparmor = true
    # The sandbox gets oom_score_adj -998; lowering it needs CAP_SYS_RESOURCE,
    # which root lacks on these machines (runc then fails "can't get final child's PID").
    restrict_oom_score_adj = true
    # netns bind mounts under state, not /var/run/netns.
    netns_mounts_under_state_dir = true
    cdi_spec_dirs = []
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = "$RUNC"
          Root = "$PREFIX/runc"
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["$CNI_BIN"]
      conf_dir = "$PREFIX/cni/net.d"
      max_conf_num = 1
  [plugins.'io.containerd.grpc.v1.cri']
    disable_tcp_service = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
  [plugins.'io.containerd.internal.v1.opt']
    path = "$PREFIX/opt"
  [plugins.'io.containerd.nri.v1.nri']
    disable = true
EOF
  else
    cat >"$PREFIX/config.toml" <<EOF
version = 2
root = "$PREFIX/root"
state = "$PREFIX/state"
[grpc]
  address = "$SOCK"
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$PAUSE_IMAGE"
    enable_selinux = false
    disable_apparmor = true
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    disable_tcp_service = true
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
    tolerate_missing_hugetlb_controller = true
    disable_hugetlb_controller = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          BinaryName = "$RUNC"
          Root = "$PREFIX/runc"
          SystemdCgroup = false
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "$CNI_BIN"
      conf_dir = "$PREFIX/cni/net.d"
      max_conf_num = 1
  [plugins."io.containerd.internal.v1.opt"]
    path = "$PREFIX/opt"
EOF
  fi
  cat >"$PREFIX/cni/net.d/10-actorlet.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "actorlet-e2e",
  "plugins": [
    { "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
      "ipam": { "type": "host-local", "dataDir": "$PREFIX/cni/ipam",
                "ranges": [[{"subnet": "$SUBNET"}]], "routes": [{"dst": "0.0.0.0/0"}] } },
    { "type": "portmap", "capabilities": {"portMappings": true} },
    { "type": "loopback" }
  ]
}
EOF
  cat >"$PREFIX/crictl.yaml" <<EOF
runtime-endpoint: unix://$SOCK
image-endpoint: unix://$SOCK
timeout: 30
EOF
  local v
  for v in FLAVOR BRIDGE SUBNET CRICTL SHIM_DIR CONTAINERD CTR RUNC; do
    printf '%s=%q\n' "$v" "${!v}"
  done >"$SETUP"
  log "wrote $PREFIX/config.toml, CNI bridge $BRIDGE $SUBNET, $PREFIX/crictl.yaml"
}

start_containerd() {
  local t p deadline
  t=$(now)
  [ -f "$PREFIX/config.toml" ] || die "no $PREFIX/config.toml: run up first"
  if running; then
    log "containerd already running (pid $(pid))"
    return 0
  fi
  STARTED=1
  # containerd finds containerd-shim-runc-v2 on its PATH.
  PATH=$SHIM_DIR:$PATH nohup "$CONTAINERD" --config "$PREFIX/config.toml" >>"$PREFIX/logs/containerd.log" 2>&1 </dev/null &
  p=$!
  echo "$p" >"$PREFIX/containerd.pid"
  deadline=$(( $(date +%s) + 60 ))
  until crictl_ --timeout 2s info >/dev/null 2>&1; do
    kill -0 "$p" 2>/dev/null || die "containerd (pid $p) exited before it answered the CRI"
    [ "$(date +%s)" -lt "$deadline" ] || die "containerd (pid $p) did not answer the CRI within 60 s"
    sleep 0.05
  done
  log "containerd answers the CRI at unix://$SOCK (pid $p, $(since "$t"))"
}

stop_containerd() {
  local t p deadline
  t=$(now)
  if ! running; then
    rm -f "$PREFIX/containerd.pid"
    log "containerd not running"
    return 0
  fi
  p=$(pid)
  kill -TERM "$p" 2>/dev/null || true
  deadline=$(( $(date +%s) + 20 ))
  while kill -0 "$p" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.05; done
  if kill -0 "$p" 2>/dev/null; then
    log "containerd (pid $p) ignored SIGTERM for 20 s: SIGKILL"
    kill -KILL "$p" 2>/dev/null || true
    deadline=$(( $(date +%s) + 10 ))
    while kill -0 "$p" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.05; done
    ! kill -0 "$p" 2>/dev/null || die "containerd (pid $p) survived SIGKILL"
  fi
  rm -f "$PREFIX/containerd.pid"
  log "containerd stopped (pid $p, $(since "$t"))"
}

images() {
  local t p out=$PREFIX/images
  t=$(now)
  mkdir -p "$out"
  for p in pause workload mkimage; do
    (cd "$ROOT" && CGO_ENABLED=0 go build -buildvcs=false -trimpath -ldflags='-s -w' -o "$out/$p" "./test/images/$p") ||
      die "go build ./test/images/$p"
  done
  log "built test/images/{pause,workload,mkimage} ($(since "$t"))"
  t=$(now)
  "$out/mkimage" -ref "$PAUSE_IMAGE" -out "$out/pause.tar" -entrypoint /pause "/pause=$out/pause"
  "$out/mkimage" -ref "$WORKLOAD_IMAGE" -out "$out/workload.tar" -entrypoint /workload "/workload=$out/workload"
  # (ctr 2.x warns on stderr that cgroup v1 is deprecated: shown only on failure)
  local msg
  for p in pause workload; do
    msg=$("$CTR" -a "$SOCK" -n k8s.io images import "$out/$p.tar" 2>&1) || die "ctr images import $out/$p.tar: $msg"
  done
  log "imported $PAUSE_IMAGE and $WORKLOAD_IMAGE ($(since "$t"))"
}

write_env() {
  cat >"$PREFIX/env" <<EOF
export ACTORLET_CONTAINERD_ENDPOINT=unix://$SOCK
export ACTORLET_CONTAINERD_FLAVOR=$FLAVOR
export ACTORLET_E2E_ENV=$SELF
export ACTORLET_E2E_PREFIX=$PREFIX
export ACTORLET_E2E_PAUSE_IMAGE=$PAUSE_IMAGE
export ACTORLET_E2E_WORKLOAD_IMAGE=$WORKLOAD_IMAGE
export ACTORLET_CRICTL=$CRICTL
export ACTORLET_CTR=$CTR
EOF
}

up() {
  local t
  t=$(now)
  if [ -f "$SETUP" ] && { running || [ -n "$(shims)" ]; }; then
    local was
    was=$(. "$SETUP"; echo "$FLAVOR")
    [ "$was" = "$FLAVOR" ] || die "the $was containerd environment is up in $PREFIX: run down first"
  fi
  if installed; then log "binaries present"; else install; fi
  STARTED=1
  if running; then
    log "containerd already running (pid $(pid)): config kept"
  else
    write_config
    # A bridge left by an earlier run with the same subnet breaks pod IPs.
    if ip link show "$BRIDGE" >/dev/null 2>&1; then
      ip link del "$BRIDGE"
      log "deleted stale bridge $BRIDGE"
    fi
    start_containerd
  fi
  images
  write_env
  log "up ($(since "$t")): set -a; . $PREFIX/env; set +a"
}

# remove_pods stops and removes every pod of our containerd, and prints the
# IDs of the pods and containers it saw (their cgroups are checked later).
remove_pods() {
  local t pods ctrs id
  t=$(now)
  pods=$(crictl_ pods -q --no-trunc) || die "crictl pods"
  ctrs=$(crictl_ ps -a -q --no-trunc) || die "crictl ps -a"
  for id in $pods; do crictl_ stopp "$id" >/dev/null || log "stopp $id failed"; done
  for id in $pods; do crictl_ rmp -f "$id" >/dev/null || log "rmp $id failed"; done
  log "removed $(wc -w <<<"$pods") pods with $(wc -w <<<"$ctrs") containers ($(since "$t"))"
  echo $pods $ctrs
}

# remove_cgroups removes the cgroups (cgroupfs: /k8s.io/<id> in every
# hierarchy) of the given IDs, and empty ones older than a minute that some
# crash left (a populated cgroup refuses rmdir). /k8s.io itself stays: every
# containerd on the host shares it.
remove_cgroups() {
  local n=0 d c id
  for d in /sys/fs/cgroup/*/"$CGROUP_PARENT" /sys/fs/cgroup/"$CGROUP_PARENT"; do
    [ -d "$d" ] || continue
    for c in $({ for id in "$@"; do echo "$d/$id"; done
      find "$d" -mindepth 1 -maxdepth 1 -type d -mmin +1; } | sort -u); do
      [ -d "$c" ] || continue
      find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
      [ -d "$c" ] || n=$((n + 1))
    done
  done
  [ "$n" = 0 ] || log "removed $n leftover cgroups under /$CGROUP_PARENT"
  # The cgroups-per-QoS test's root (TestContainerdCgroupsPerQOS): what a
  # crash left there, once empty.
  for d in /sys/fs/cgroup/*/actorlet-e2e /sys/fs/cgroup/actorlet-e2e; do
    if [ -d "$d" ]; then find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true; fi
  done
}

down() {
  local t ids="" id n p d
  t=$(now)
  # Pods outlive containerd: if it was stopped, start it to remove them.
  if ! running && [ -f "$PREFIX/config.toml" ] && [ -n "$(shims)" ]; then
    log "containerd is down but its shims run: starting it to remove the pods"
    start_containerd
  fi
  if running; then ids=$(remove_pods); fi
  stop_containerd
  # Last resort for what containerd did not remove: runc state, then shims.
  if [ -x "${RUNC:-}" ] && [ -d "$PREFIX/runc/k8s.io" ]; then
    for id in $("$RUNC" --root "$PREFIX/runc/k8s.io" list -q 2>/dev/null || true); do
      "$RUNC" --root "$PREFIX/runc/k8s.io" delete -f "$id" >/dev/null 2>&1 || true
      ids="$ids $id"
      log "runc delete -f $id (left by containerd)"
    done
  fi
  for p in $(shims); do
    kill -KILL "$p" 2>/dev/null || true
    log "killed leftover shim pid $p"
  done
  # Mounts left under PREFIX (rootfs overlays, shm, netns), deepest first.
  n=0
  for d in $(awk -v p="$PREFIX/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r); do
    umount "$d" 2>/dev/null || umount -l "$d" || log "umount $d failed"
    n=$((n + 1))
  done
  [ "$n" = 0 ] || log "unmounted $n leftovers under $PREFIX"
  if ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link del "$BRIDGE"
    log "deleted bridge $BRIDGE"
  fi
  # shellcheck disable=SC2086
  remove_cgroups $ids
  rm -f "$SOCK" "$SOCK.ttrpc" "$PREFIX/env"
  n=$(awk -v p="$PREFIX/" 'index($2, p) == 1' /proc/mounts | wc -l)
  # containerd's root and state go too (a fresh up imports the images again
  # in about a second), but never while anything is still mounted there.
  if [ "$n" = 0 ]; then
    rm -rf "$PREFIX/root" "$PREFIX/state" "$PREFIX/runc" "$PREFIX/cni/ipam"
  else
    log "$n mounts still under $PREFIX: root and state kept"
  fi
  log "down ($(since "$t")): $n mounts left under $PREFIX"
}

status() {
  if ! running; then
    echo "down (no containerd running for $PREFIX)"
    return 1
  fi
  local v
  if v=$(crictl_ --timeout 5s version 2>/dev/null | awk '/RuntimeVersion/ { print $2 }'); then
    echo "up: containerd $v ($FLAVOR), pid $(pid), unix://$SOCK"
  else
    echo "not answering: containerd pid $(pid) runs but unix://$SOCK does not answer the CRI"
    return 1
  fi
}

choose
case $CMD in
install) install ;;
up) up ;;
stop-containerd) stop_containerd ;;
start-containerd) start_containerd ;;
down) down ;;
status) status || exit 1 ;;
*) sed -n '2,24p' "$SELF" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# The containerd environment of actorlet's end-to-end tests, as root:
# containerd + runc + CNI bridge with a private config, root, state and socket,
# and the test images (built from test/images, imported without a registry).
#
#   test/e2e/env.sh install           packages and binaries (cached; a rerun takes seconds)
#   test/e2e/env.sh up                install, config, start containerd, build and import images,
#                                     write $PREFIX/env (source it to run the tests)
#   test/e2e/env.sh stop-containerd   stop containerd by its PID, pods left running
#   test/e2e/env.sh start-containerd  start it again with the same config
#   test/e2e/env.sh down              remove all pods, stop containerd, unmount leftovers, delete the bridge
#   test/e2e/env.sh status
#
# FLAVOR=upstream (default): containerd v2.4.2 + runc v1.5.3 built from the Go
# module proxy, cached under $ACTORLET_TOOLS. FLAVOR=debian: Debian's containerd
# 1.6 + runc 1.1 (no GetContainerEvents: actorlet relists). CNI plugins come from
# Debian's containernetworking-plugins (/usr/lib/cni). What was learnt on these
# machines is in ../shared/recipes/containerd.md of the workplace.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SELF=$ROOT/test/e2e/env.sh
export PATH=/usr/local/go/bin:$PATH
FLAVOR=${FLAVOR:-upstream}
PREFIX=${ACTORLET_E2E_PREFIX:-/tmp/actorlet-e2e}
TOOLS=${ACTORLET_TOOLS:-/var/cache/actorlet-tools}
CONTAINERD_VERSION=v2.4.2
RUNC_VERSION=v1.5.3
CRICTL_VERSION=v1.37.0
SOCK=$PREFIX/containerd.sock
BRIDGE=actorletcni0
SUBNET=10.88.91.0/24
PAUSE_IMAGE=localhost/actorlet/pause:1.0
WORKLOAD_IMAGE=localhost/actorlet/workload:1.0
CRICTL=${ACTORLET_CRICTL:-$TOOLS/crictl-$CRICTL_VERSION}

case $FLAVOR in
upstream)
  CONTAINERD=$TOOLS/containerd-$CONTAINERD_VERSION/containerd
  CTR=$TOOLS/containerd-$CONTAINERD_VERSION/ctr
  RUNC=$TOOLS/runc-$RUNC_VERSION/runc
  SHIM_DIR=$TOOLS/containerd-$CONTAINERD_VERSION ;;
debian)
  CONTAINERD=/usr/bin/containerd CTR=/usr/bin/ctr RUNC=/usr/sbin/runc SHIM_DIR=/usr/bin ;;
*) echo "env.sh: FLAVOR must be upstream or debian, not $FLAVOR" >&2; exit 2 ;;
esac

now() { date +%s%N; }
log() { echo "env.sh [$FLAVOR]: $*" >&2; }
since() { echo "$(( ($(now) - $1) / 1000000 )) ms"; }
die() { log "FAILED: $*"; exit 1; }

# gobuild DIR PKG... : go install into DIR through a temporary dir, so a
# cached binary is always a complete one.
gobuild() {
  local dir=$1 tmp; shift
  tmp=$(mktemp -d "$TOOLS/.build-XXXXXX")
  GOBIN=$tmp go install "$@" || { rm -rf "$tmp"; die "go install $*"; }
  mkdir -p "$dir"; mv "$tmp"/* "$dir"/; rm -rf "$tmp"
}

install() {
  local t; t=$(now)
  mkdir -p "$TOOLS"
  local pkgs="containerd runc containernetworking-plugins iptables"
  [ "$FLAVOR" = upstream ] && pkgs="$pkgs libseccomp-dev pkg-config gcc"
  local missing="" p
  for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    apt-get update -qq || die "apt-get update"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null || die "apt-get install$missing"
    log "apt packages installed:$missing ($(since "$t"))"
  fi
  # Debian's package may start a system containerd on a systemd host; ours
  # has its own socket, root and state, so the two never meet.
  if [ "$FLAVOR" = upstream ]; then
    if [ ! -x "$CONTAINERD" ] || [ ! -x "$CTR" ] || [ ! -x "$SHIM_DIR/containerd-shim-runc-v2" ]; then
      local b; b=$(now)
      gobuild "$SHIM_DIR" -tags "no_btrfs no_devmapper no_zfs" \
        github.com/containerd/containerd/v2/cmd/containerd@$CONTAINERD_VERSION \
        github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION \
        github.com/containerd/containerd/v2/cmd/ctr@$CONTAINERD_VERSION
      log "containerd $CONTAINERD_VERSION built ($(since "$b"))"
    fi
    if [ ! -x "$RUNC" ]; then
      local b; b=$(now)
      CGO_ENABLED=1 gobuild "$(dirname "$RUNC")" -tags seccomp github.com/opencontainers/runc@$RUNC_VERSION
      log "runc $RUNC_VERSION built ($(since "$b"))"
    fi
  fi
  if [ ! -x "$CRICTL" ]; then
    local b; b=$(now)
    gobuild "$TOOLS/crictl-build" sigs.k8s.io/cri-tools/cmd/crictl@$CRICTL_VERSION
    mv "$TOOLS/crictl-build/crictl" "$CRICTL"; rmdir "$TOOLS/crictl-build"
    log "crictl $CRICTL_VERSION built ($(since "$b"))"
  fi
  log "installed: $("$CONTAINERD" --version), runc $("$RUNC" --version | head -1) ($(since "$t"))"
}

write_config() {
  mkdir -p "$PREFIX"/{root,state,runc,cni/net.d,cni/ipam,logs,images,opt}
  chmod 0700 "$PREFIX"
  if [ "$FLAVOR" = upstream ]; then
    cat > "$PREFIX/config.toml" <<EOF
version = 3
root = "$PREFIX/root"
state = "$PREFIX/state"
[grpc]
  address = "$SOCK"
[ttrpc]
  address = ""
[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "$PAUSE_IMAGE"
  [plugins.'io.containerd.cri.v1.runtime']
    enable_selinux = false
    disable_apparmor = true
    # Lowering oom_score_adj needs CAP_SYS_RESOURCE, which root may lack here.
    restrict_oom_score_adj = true
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
      bin_dirs = ["/usr/lib/cni"]
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
    cat > "$PREFIX/config.toml" <<EOF
version = 2
root = "$PREFIX/root"
state = "$PREFIX/state"
[grpc]
  address = "$SOCK"
[ttrpc]
  address = ""
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "$PAUSE_IMAGE"
    disable_apparmor = true
    restrict_oom_score_adj = true
    enable_selinux = false
    disable_tcp_service = true
    netns_mounts_under_state_dir = true
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
      bin_dir = "/usr/lib/cni"
      conf_dir = "$PREFIX/cni/net.d"
      max_conf_num = 1
  [plugins."io.containerd.internal.v1.opt"]
    path = "$PREFIX/opt"
EOF
  fi
  cat > "$PREFIX/cni/net.d/10-actorlet.conflist" <<EOF
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
  echo "$FLAVOR" > "$PREFIX/flavor"
}

crictl_() { "$CRICTL" --runtime-endpoint "unix://$SOCK" --image-endpoint "unix://$SOCK" "$@"; }

start_containerd() {
  local t pid; t=$(now)
  [ -f "$PREFIX/config.toml" ] || die "no config: run up first"
  if running; then log "containerd already running (pid $(cat "$PREFIX/containerd.pid"))"; return 0; fi
  # The shim is found on PATH, next to containerd.
  PATH=$SHIM_DIR:$PATH nohup "$CONTAINERD" --config "$PREFIX/config.toml" >>"$PREFIX/logs/containerd.log" 2>&1 &
  pid=$!
  echo "$pid" > "$PREFIX/containerd.pid"
  local deadline=$(( $(date +%s) + 60 ))
  until crictl_ --timeout 2s info >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { tail -20 "$PREFIX/logs/containerd.log" >&2; die "containerd exited"; }
    [ "$(date +%s)" -lt "$deadline" ] || { tail -20 "$PREFIX/logs/containerd.log" >&2; die "containerd did not answer in 60 s"; }
    sleep 0.05
  done
  log "containerd answers the CRI ($(since "$t"), pid $pid)"
}

running() { [ -f "$PREFIX/containerd.pid" ] && kill -0 "$(cat "$PREFIX/containerd.pid")" 2>/dev/null; }

stop_containerd() {
  running || { rm -f "$PREFIX/containerd.pid"; return 0; }
  local pid deadline; pid=$(cat "$PREFIX/containerd.pid")
  kill "$pid"
  deadline=$(( $(date +%s) + 20 ))
  while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.05; done
  kill -0 "$pid" 2>/dev/null && { log "containerd ignored SIGTERM for 20 s: SIGKILL"; kill -9 "$pid" || true; }
  rm -f "$PREFIX/containerd.pid"
  log "containerd stopped (pid $pid)"
}

images() {
  local t bin=$PREFIX/images; t=$(now)
  for p in pause workload mkimage; do
    (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$bin/$p" ./test/images/$p) || die "build test/images/$p"
  done
  "$bin/mkimage" -ref "$PAUSE_IMAGE" -out "$bin/pause.tar" -entrypoint /pause "/pause=$bin/pause"
  "$bin/mkimage" -ref "$WORKLOAD_IMAGE" -out "$bin/workload.tar" -entrypoint /workload "/workload=$bin/workload"
  for i in pause workload; do
    "$CTR" -a "$SOCK" -n k8s.io images import "$bin/$i.tar" >/dev/null || die "ctr images import $i.tar"
  done
  log "images $PAUSE_IMAGE and $WORKLOAD_IMAGE built and imported ($(since "$t"))"
}

write_env() {
  cat > "$PREFIX/env" <<EOF
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
  local t; t=$(now)
  if running; then
    [ "$(cat "$PREFIX/flavor" 2>/dev/null)" = "$FLAVOR" ] || die "a $(cat "$PREFIX/flavor") containerd is up: run down first"
  fi
  install
  write_config
  if ! running; then
    # A bridge left by an earlier run with the same subnet breaks pod IPs.
    ip link del "$BRIDGE" 2>/dev/null || true
  fi
  start_containerd
  images
  write_env
  log "up ($(since "$t")); for the tests: set -a; . $PREFIX/env; set +a"
}

down() {
  local t; t=$(now)
  if running && [ -x "$CRICTL" ]; then
    crictl_ pods -q 2>/dev/null | xargs -r "$CRICTL" --runtime-endpoint "unix://$SOCK" stopp >/dev/null 2>&1 || true
    crictl_ pods -q 2>/dev/null | xargs -r "$CRICTL" --runtime-endpoint "unix://$SOCK" rmp -f >/dev/null 2>&1 || true
  fi
  # The flavor that was up decides which binaries stop it.
  stop_containerd
  # Leftover mounts under PREFIX (rootfs overlays, shm, netns), deepest first.
  grep " $PREFIX/" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  ip link del "$BRIDGE" 2>/dev/null || true
  rm -f "$SOCK" "$PREFIX/env"
  log "down ($(since "$t")): $(grep -c " $PREFIX/" /proc/mounts || true) mounts left under $PREFIX"
}

status() {
  if running; then echo "containerd ($(cat "$PREFIX/flavor")) up, pid $(cat "$PREFIX/containerd.pid"), socket $SOCK"
  else echo "containerd down"; return 1; fi
}

# The flavor of a running environment wins for the commands that act on it.
if [ "${1:-}" != up ] && [ "${1:-}" != install ] && [ -f "$PREFIX/flavor" ] && [ -z "${FLAVOR_SET:-}" ]; then
  f=$(cat "$PREFIX/flavor")
  [ "$f" = "$FLAVOR" ] || FLAVOR_SET=1 FLAVOR=$f exec "$SELF" "$@"
fi

case "${1:-}" in
install) install ;;
up) up ;;
stop-containerd) stop_containerd ;;
start-containerd) start_containerd ;;
down) down ;;
status) status ;;
*) sed -n 2,18p "$SELF" >&2; exit 2 ;;
esac

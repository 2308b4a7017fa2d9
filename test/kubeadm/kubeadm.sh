#!/usr/bin/env bash
# Nodes for kubeadm, each in a network and a mount namespace of its own, with
# its own containerd (test/e2e/env.sh), so that kubeadm's standard ports
# (6443, 2379/2380, 10250, 10257, 10259) and its directories (/etc/kubernetes,
# /var/lib/kubelet, /var/lib/etcd, ...) never meet the host's or another
# test's. Used by kubeadm_test.go; run as root.
#
#   test/kubeadm/kubeadm.sh images            the images kubeadm asks for (`kubeadm config images list`,
#                                             without the CoreDNS and kube-proxy add-ons), each a tiny
#                                             rootfs with the binary cluster.sh built, as docker-archives
#                                             in $ACTORLET_TOOLS/kubeadm-images-v1.37.2 (cached)
#   test/kubeadm/kubeadm.sh net-up            namespaces alk-cp and alk-worker joined by a veth pair,
#                                             10.88.104.1/24 and 10.88.104.2/24, default routes over it
#   test/kubeadm/kubeadm.sh node-up NODE      NODE's mount namespace (/etc, /var and /usr overlaid: writes
#                                             go to $PREFIX/NODE), its containerd (prefix /tmp/alk-NODE,
#                                             bridge and pod subnet per node), the images imported
#   test/kubeadm/kubeadm.sh exec NODE CMD...  run CMD in NODE's namespaces
#   test/kubeadm/kubeadm.sh node-down NODE    containerd's pods removed and it stopped, the mount
#                                             namespace and its overlays gone
#   test/kubeadm/kubeadm.sh net-down          the network namespaces gone
#
# NODE is cp or worker. ACTORLET_KUBEADM_PREFIX (default /tmp/alk-kubeadm), ACTORLET_TOOLS.
set -Eeuo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
PREFIX=${ACTORLET_KUBEADM_PREFIX:-/tmp/alk-kubeadm}
TOOLS=${ACTORLET_TOOLS:-/var/cache/actorlet-tools}
K8S_VERSION=v1.37.2
BIN=$TOOLS/k8s-$K8S_VERSION
IMAGES=$TOOLS/kubeadm-images-$K8S_VERSION
NSDIR=$PREFIX/ns
CMD=${1:-}

log() { echo "kubeadm.sh $(date +%T.%3N) $*" >&2; }
die() { trap - ERR; log "FAILED: $*"; exit 1; }
trap 'die "line $LINENO: \`$BASH_COMMAND\` exited with $?"' ERR

# node NAME sets the node's addresses, bridge and containerd prefix.
node() {
  case $1 in
  cp) IP=10.88.104.1 DEV=alkv-cp BRIDGE=alkcni1 SUBNET=10.88.105.0/25 ;;
  worker) IP=10.88.104.2 DEV=alkv-wk BRIDGE=alkcni2 SUBNET=10.88.105.128/25 ;;
  *) die "unknown node '$1' (cp, worker)" ;;
  esac
  NAME=$1 NETNS=alk-$1 E2E_PREFIX=/tmp/alk-$1
}

in_node() {
  local name=$1; shift
  nsenter --mount="$NSDIR/$name" --net="/run/netns/alk-$name" -- "$@"
}

# images builds one docker-archive per image kubeadm lists, with the binary
# of the same name; the pause image is the project's (test/images/pause).
images() {
  mkdir -p "$IMAGES"
  local tmp ref name bin out
  tmp=$(mktemp -d)
  (cd "$ROOT" && CGO_ENABLED=0 go build -buildvcs=false -trimpath -ldflags='-s -w' -o "$tmp/" ./test/images/mkimage ./test/images/pause)
  cat >"$tmp/cluster.yaml" <<EOF
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: $K8S_VERSION
dns: {disabled: true}
proxy: {disabled: true}
EOF
  for ref in $("$BIN/kubeadm" config images list --config "$tmp/cluster.yaml" 2>/dev/null); do
    name=${ref##*/}; name=${name%%:*}
    case $name in
    pause) bin=$tmp/pause ;;
    kube-apiserver | kube-controller-manager | kube-scheduler | etcd) bin=$BIN/$name ;;
    *) die "no binary for $ref" ;;
    esac
    [ -x "$bin" ] || die "$bin is missing: run test/e2e/cluster.sh install kubeadm"
    out=$IMAGES/$(echo "$ref" | tr '/:' '__').tar
    if [ -s "$out" ] && [ "$out" -nt "$bin" ] && [ "$name" != pause ]; then continue; fi
    "$tmp/mkimage" -ref "$ref" -out "$out.tmp" -entrypoint "/usr/local/bin/$name" "/usr/local/bin/$name=$bin"
    mv "$out.tmp" "$out"
    log "built $ref"
  done
  rm -rf "$tmp"
  ls "$IMAGES"/*.tar >/dev/null
}

net_up() {
  local n
  for n in cp worker; do
    node $n
    ip netns list | grep -qw "$NETNS" || ip netns add "$NETNS"
    ip -n "$NETNS" link set lo up
  done
  if ! ip -n alk-cp link show alkv-cp >/dev/null 2>&1; then
    ip link add alkv-cp netns alk-cp type veth peer name alkv-wk netns alk-worker
  fi
  for n in cp worker; do
    node $n
    ip -n "$NETNS" addr replace "$IP/24" dev "$DEV"
    ip -n "$NETNS" link set "$DEV" up
    ip -n "$NETNS" route replace default dev "$DEV"
    # The pods' bridge routes and kubeadm's preflight want forwarding; it is
    # the namespace's own setting.
    ip netns exec "$NETNS" sysctl -qw net.ipv4.ip_forward=1
  done
  log "net up: alk-cp 10.88.104.1, alk-worker 10.88.104.2"
}

net_down() {
  local n
  for n in alk-cp alk-worker; do
    if ip netns list | grep -qw "$n"; then ip netns delete "$n"; fi
  done
  if mountpoint -q "$NSDIR" && [ -z "$(ls -A "$NSDIR")" ]; then umount "$NSDIR"; fi
  log "net down"
}

node_up() {
  node "$1"
  local d
  mkdir -p "$NSDIR" "$PREFIX/$NAME"
  # The namespace file must sit on a private mount.
  if ! mountpoint -q "$NSDIR"; then mount --bind "$NSDIR" "$NSDIR"; fi
  mount --make-private "$NSDIR"
  if ! mountpoint -q "$NSDIR/$NAME" 2>/dev/null; then
    touch "$NSDIR/$NAME"
    for d in etc var usr; do mkdir -p "$PREFIX/$NAME/$d/upper" "$PREFIX/$NAME/$d/work"; done
    unshare --mount="$NSDIR/$NAME" --propagation private sh -ec '
      for d in etc var usr; do
        mount -t overlay "alk-'"$NAME"'-$d" -o "lowerdir=/$d,upperdir='"$PREFIX/$NAME"'/$d/upper,workdir='"$PREFIX/$NAME"'/$d/work" "/$d"
      done
      # Names resolve locally, and nothing asks a resolver beyond loopback.
      printf "127.0.0.1 localhost\n10.88.104.1 alk-cp\n10.88.104.2 alk-worker\n" >/etc/hosts
      echo "nameserver 127.0.0.1" >/etc/resolv.conf'
  fi
  in_node "$NAME" env ACTORLET_E2E_PREFIX="$E2E_PREFIX" ACTORLET_E2E_BRIDGE="$BRIDGE" ACTORLET_E2E_SUBNET="$SUBNET" \
    ACTORLET_TOOLS="$TOOLS" "$ROOT/test/e2e/env.sh" up
  local tar msg
  for tar in "$IMAGES"/*.tar; do
    msg=$(in_node "$NAME" "$TOOLS/containerd-v2.4.2/ctr" -a "$E2E_PREFIX/containerd.sock" -n k8s.io images import "$tar" 2>&1) ||
      die "importing $tar into $NAME's containerd: $msg"
  done
  log "node $NAME up: containerd unix://$E2E_PREFIX/containerd.sock, images imported"
}

node_down() {
  node "$1"
  if mountpoint -q "$NSDIR/$NAME" 2>/dev/null; then
    if ip netns list | grep -qw "$NETNS"; then
      in_node "$NAME" env ACTORLET_E2E_PREFIX="$E2E_PREFIX" ACTORLET_TOOLS="$TOOLS" "$ROOT/test/e2e/env.sh" down || log "env.sh down in $NAME failed"
    fi
    umount "$NSDIR/$NAME" || umount -l "$NSDIR/$NAME"
  fi
  rm -f "$NSDIR/$NAME"
  rm -rf "${PREFIX:?}/$NAME" "$E2E_PREFIX"
  # The node's cgroup root (its cgroupRoot, /alk-NODE), once empty.
  local d
  for d in /sys/fs/cgroup/*/alk-"$NAME" /sys/fs/cgroup/alk-"$NAME"; do
    if [ -d "$d" ]; then find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || log "cgroups left under $d"; fi
  done
  log "node $NAME down"
}

case $CMD in
images) images ;;
net-up) net_up ;;
net-down) net_down ;;
node-up) node_up "${2:?node-up NODE}" ;;
node-down) node_down "${2:?node-down NODE}" ;;
exec) shift; n=${1:?exec NODE CMD...}; shift; node "$n"; exec nsenter --mount="$NSDIR/$n" --net="/run/netns/alk-$n" -- "$@" ;;
*) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2; exit 2 ;;
esac

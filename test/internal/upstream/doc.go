// Package upstream starts the processes of a test that compares actorlet
// with the upstream kubelet v1.37.2 in the cluster of test/e2e/cluster.sh:
// `actorlet sim-runtime` on a socket, `actorlet run`, and the kubelet
// itself, as user nobody in its own user and mount namespaces (setpriv +
// unshare, feature gate KubeletInUserNamespace), with /var/lib and
// /var/log bind-mounted from the test's directory, so that it never
// writes the host's sysctls or paths. It needs root, setpriv and unshare
// (util-linux).
//
// Every process runs in its own process group, logs to a file, and is
// stopped (SIGTERM, then SIGKILL after 15 s) at the test's cleanup; when
// the test failed, the tail of its log is printed. Used by
// test/benchcluster and test/e2e.
package upstream

// Package staticpod reads static pod manifests from a directory, like the
// kubelet's --pod-manifest-path (staticPodPath), and offers them as a pod
// source.
//
// # What a manifest becomes
//
// Every regular file in the directory (hidden files, directories and editor
// temporary files are skipped) holds exactly one v1 Pod in YAML or JSON. It is
// decoded strictly (unknown fields are an error), given the API defaults that
// actorlet relies on (see [ApplyDefaults]), bound to the node and checked with
// [Validate]:
//
//   - metadata.name becomes "<name>-<nodename>" (node name lowercased), the
//     namespace defaults to "default" and spec.nodeName is the node name;
//   - the UID is the hex md5 of "host:<nodeName>", "file:<path>" and a
//     deterministic (JSON) encoding of the defaulted pod, so the same content
//     in the same file always yields the same UID, a content change yields a
//     new UID (the old pod is removed and a new one added), and identical
//     content in two files yields two pods;
//   - annotations kubernetes.io/config.source=file,
//     kubernetes.io/config.hash=<uid> and kubernetes.io/config.seen=<first
//     time this UID was read, RFC 3339> are set; the seen time never feeds the
//     UID;
//   - a toleration for every NoExecute taint is added, so node problems do not
//     evict static pods.
//
// A file that cannot be read, decoded or validated is a [Rejection]: its pod
// is absent from the set, the other files are unaffected. A second file
// defining a pod with the same namespace and name as an earlier file (in file
// name order) is rejected as a duplicate, as the kubelet does.
//
// # Delivery
//
// [Source.Run] is level-triggered: every delivery is a [Snapshot] of the whole
// desired set, never a delta. It watches the directory with fsnotify and
// re-reads it every ResyncPeriod as well; it delivers only when the set of pod
// UIDs or the rejections changed. A missing directory is an empty set and is
// noticed as soon as it appears (at the latest on the next resync).
package staticpod

// Package staticpod reads static pod manifests from a directory, like the
// kubelet's --pod-manifest-path (staticPodPath), and offers them as a pod
// source.
//
// # What a manifest becomes
//
// Every regular file in the directory holds exactly one v1 Pod in YAML or
// JSON. Hidden files, editor backups and temporaries, and subdirectories
// (not searched, as by the kubelet) are skipped: each is a [Skip] with its
// reason, logged at debug level. A file over [MaxManifestBytes] (3 MiB, the
// API server's request limit) is rejected unread; the kubelet has no limit.
// The pod is decoded case-sensitively; unknown and duplicate fields are
// ignored, as the kubelet's decoder ignores them, and named, all of them, in
// one [Warning] for the file (logged once). It is then given the API
// defaults that actorlet relies on (see [ApplyDefaults]), bound to the node
// and checked with [Validate], which names every problem in one error
// (annotations over 256 KiB in total are refused, as by the API server):
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

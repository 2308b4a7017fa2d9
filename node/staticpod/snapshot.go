package staticpod

import corev1 "k8s.io/api/core/v1"

// Snapshot is the complete desired set read from the manifest directory.
//
// Pods are ordered by file name, Rejections likewise. The pods belong to the
// receiver: the source keeps no reference to them after delivery.
type Snapshot struct {
	Pods     []*corev1.Pod
	Rejected []Rejection
	// Warnings are manifests that yielded a pod with something ignored in
	// them (unknown or duplicate fields), as the kubelet warns and goes on.
	Warnings []Warning
	// Skipped are directory entries that are not read as manifests, with
	// the reason.
	Skipped []Skip
}

// Warning is what was ignored in a manifest that yielded a pod: every
// unknown or duplicate field, in one message.
type Warning struct {
	File string
	Msg  string
}

// Skip is a directory entry that is not a manifest.
type Skip struct {
	File   string
	Reason string
}

// Rejection is a manifest file that yielded no pod.
type Rejection struct {
	// File is the path of the manifest.
	File string
	// Err names the problem; it matches one of ErrUnreadable, ErrDecode,
	// ErrNotPod, ErrInvalid or ErrDuplicate with errors.Is, and is a
	// *ManifestError with errors.As.
	Err error
}

// key is what decides whether two snapshots differ: the pod UIDs and the
// rejections (file and message), in order.
func (s Snapshot) key() []string {
	k := make([]string, 0, len(s.Pods)+2*len(s.Rejected))
	for _, p := range s.Pods {
		k = append(k, "pod:"+string(p.UID))
	}
	for _, r := range s.Rejected {
		k = append(k, "rejected:"+r.File, r.Err.Error())
	}
	return k
}

package sim

import "slices"

// Two questions are asked of a pod UID's sandboxes when one more is run:
// is its name (metadata) reserved, and how many READY sandboxes has the
// pod (sandbox.podUID). Both are answered from sandboxesByPod, which finds
// sandboxes by their label LabelPodUID, and from sandboxesByUID, which
// finds by metadata uid only the sandboxes that the label does not find
// under it (they lack it, or it has another value): none of those of the
// kubelet or actorlet, whose label is the metadata's uid, so that neither
// question costs a map entry per pod of its own. A sandbox is found under
// a uid by at most one of the two.

// labelledByUID reports whether sandboxesByPod finds sb under its
// metadata uid.
func (sb *sandbox) labelledByUID() bool {
	v, ok := sb.labels.get(LabelPodUID)
	return ok && v == sb.meta.uid
}

// sandboxesOfUIDLocked calls f for each sandbox whose label LabelPodUID
// or metadata uid is uid, those of the label oldest first, then the
// others oldest first.
func (r *Runtime) sandboxesOfUIDLocked(uid string, f func(*sandbox)) {
	for _, sb := range r.sandboxesByPod.get(uid) {
		f(sb)
	}
	for _, sb := range r.sandboxesByUID[uid] {
		f(sb)
	}
}

// sandboxNamedLocked is the sandbox holding the name of metadata m, or nil.
func (r *Runtime) sandboxNamedLocked(m sandboxMeta) *sandbox {
	var owner *sandbox
	r.sandboxesOfUIDLocked(m.uid, func(sb *sandbox) {
		if sb.meta == m {
			owner = sb
		}
	})
	return owner
}

// readyOfPodLocked is the number of READY sandboxes of pod UID podUID.
func (r *Runtime) readyOfPodLocked(podUID string) int {
	n := 0
	r.sandboxesOfUIDLocked(podUID, func(sb *sandbox) {
		if sb.ready && sb.podUID() == podUID {
			n++
		}
	})
	return n
}

// addSandboxLocked makes sb, new, found by pod UID and name.
func (r *Runtime) addSandboxLocked(sb *sandbox) {
	r.sandboxesByPod.add(sb.labels, sb)
	if !sb.labelledByUID() {
		r.sandboxesByUID[sb.meta.uid] = append(r.sandboxesByUID[sb.meta.uid], sb)
	}
}

// forgetSandboxLocked undoes addSandboxLocked.
func (r *Runtime) forgetSandboxLocked(sb *sandbox) {
	r.sandboxesByPod.remove(sb.labels, sb)
	if sb.labelledByUID() {
		return
	}
	objs := r.sandboxesByUID[sb.meta.uid]
	if i := slices.Index(objs, sb); i >= 0 {
		if len(objs) == 1 {
			delete(r.sandboxesByUID, sb.meta.uid)
		} else {
			r.sandboxesByUID[sb.meta.uid] = slices.Delete(objs, i, i+1)
		}
	}
}

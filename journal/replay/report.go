package replay

import (
	"fmt"
)

// Divergence is one place where the journal disagrees with itself: at event
// (or snapshot) Seq of pod PodUID, the field at Field holds Folded in the
// state folded so far, but Stored in the journaled record.
type Divergence struct {
	PodUID string `json:"podUID"`
	// Pod is namespace/name, empty if the state holds no spec.
	Pod string `json:"pod,omitempty"`
	// Seq is the event or snapshot the divergence was found at.
	Seq uint64 `json:"seq"`
	// Field is a path into the pod's state (proto field names, e.g.
	// containers[app].id) or, for a derived status, "status." and its JSON
	// path.
	Field  string `json:"field"`
	Folded string `json:"folded"`
	Stored string `json:"stored"`
	// Detail says what was compared.
	Detail string `json:"detail"`
}

func (d Divergence) String() string {
	return fmt.Sprintf("pod %s seq %d: %s: folded %s vs stored %s (%s)", podLabel(d.PodUID, d.Pod), d.Seq, d.Field, d.Folded, d.Stored, d.Detail)
}

// Damage is a record the journal found damaged: it is not folded.
type Damage struct {
	// PodUID is empty for damage of the file as a whole.
	PodUID string `json:"podUID,omitempty"`
	Seq    uint64 `json:"seq,omitempty"`
	Detail string `json:"detail"`
}

func (d Damage) String() string {
	switch {
	case d.PodUID == "":
		return "file: " + d.Detail
	case d.Seq == 0:
		return fmt.Sprintf("pod %s: %s", d.PodUID, d.Detail)
	default:
		return fmt.Sprintf("pod %s seq %d: %s", d.PodUID, d.Seq, d.Detail)
	}
}

// Pod is the replay of one pod.
type Pod struct {
	UID string `json:"uid"`
	// Name is namespace/name, empty if the state holds no spec.
	Name string `json:"pod,omitempty"`
	// From is where the fold started: "seq 1", or "snapshot at seq N
	// (events 1-N compacted)"; "not folded: damaged" for a damaged pod.
	From string `json:"from"`
	// SnapshotSeq is the stored snapshot's seq, 0 without one.
	SnapshotSeq uint64 `json:"snapshotSeq,omitempty"`
	// Events is how many events were folded; LastSeq the last one's seq (or
	// the snapshot's).
	Events  int    `json:"events"`
	LastSeq uint64 `json:"lastSeq"`
	// Snapshots is how many snapshots the fold was compared with: the stored
	// one, if any, and the one that would be taken of the folded state.
	Snapshots int `json:"snapshots"`
	// Phase is the pod phase derived from the folded state, as of its last
	// event's time (the snapshot's if no event follows it).
	Phase       string       `json:"phase,omitempty"`
	Divergences []Divergence `json:"divergences,omitempty"`
	// Damage lists the pod's damaged records; a damaged pod is not folded.
	Damage []Damage `json:"damage,omitempty"`
}

// Report is the replay of a journal.
type Report struct {
	Path string `json:"path"`
	Pods []Pod  `json:"pods"`
	// FileDamage is damage of the file that names no pod.
	FileDamage []Damage `json:"fileDamage,omitempty"`
	Summary    Summary  `json:"summary"`
}

// Summary counts a Report.
type Summary struct {
	Pods        int `json:"pods"`
	Events      int `json:"events"`
	Snapshots   int `json:"snapshots"`
	Divergences int `json:"divergences"`
	// Damaged counts the damaged pods, plus one if the file has damage of
	// its own.
	Damaged int `json:"damaged"`
}

// summarize fills r.Summary from r.Pods and r.FileDamage.
func (r *Report) summarize() {
	s := Summary{}
	for _, p := range r.Pods {
		s.Pods++
		s.Events += p.Events
		s.Snapshots += p.Snapshots
		s.Divergences += len(p.Divergences)
		if len(p.Damage) > 0 {
			s.Damaged++
		}
	}
	if len(r.FileDamage) > 0 {
		s.Damaged++
	}
	r.Summary = s
}

// Clean reports whether the replay found neither divergence nor damage.
func (r *Report) Clean() bool { return r.Summary.Divergences == 0 && r.Summary.Damaged == 0 }

// String is the summary line printed at the end of a replay.
func (s Summary) String() string {
	return fmt.Sprintf("replayed %d pods: %d events folded, %d snapshots compared, %d divergences, %d damaged",
		s.Pods, s.Events, s.Snapshots, s.Divergences, s.Damaged)
}

func podLabel(uid, name string) string {
	if name == "" {
		return uid
	}
	return fmt.Sprintf("%s (uid %s)", name, uid)
}

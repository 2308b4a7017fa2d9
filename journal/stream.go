package journal

import (
	"fmt"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// Stream is what the journal holds for one pod: its latest snapshot, if any,
// and the events after it. Replaying Events in order on top of Snapshot.State
// gives the pod's state as of LastSeq.
type Stream struct {
	// Snapshot is nil if the pod has none.
	Snapshot *pb.Snapshot
	// Events are the pod's events after the snapshot, in seq order, gapless:
	// the first has seq Snapshot.Seq+1 (or 1 without snapshot).
	Events []*pb.Envelope
}

// LastSeq is the seq of the pod's last stored event: the next Append for the
// pod must start at LastSeq()+1.
func (s *Stream) LastSeq() uint64 {
	if n := len(s.Events); n > 0 {
		return s.Events[n-1].Seq
	}
	if s.Snapshot != nil {
		return s.Snapshot.Seq
	}
	return 0
}

// streamBuilder decodes and checks one pod's stream: its stored snapshot,
// then its records in log order. Load, LoadAll and Verify share it, so they
// agree on what a damaged stream is.
type streamBuilder struct {
	uid    string
	keep   bool // keep the events (Load, LoadAll), or only check them (Verify)
	stream Stream
	// next is the seq the next record must have.
	next uint64
	// broken: the snapshot is unusable, so the records cannot be checked.
	broken   bool
	problems []Problem
}

// newStreamBuilder starts the stream of pod uid, without snapshot.
func newStreamBuilder(uid string, keep bool) *streamBuilder {
	return &streamBuilder{uid: uid, keep: keep, next: 1}
}

// setSnapshot starts the stream from the pod's stored snapshot, as
// openSnapshot found it.
func (b *streamBuilder) setSnapshot(sn storedSnapshot) {
	if sn.problem != nil {
		b.fail(*sn.problem)
		b.broken = true
		return
	}
	s, p := decodeSnapshot(b.uid, sn.payload)
	if p != nil {
		b.fail(*p)
		b.broken = true
		return
	}
	b.stream.Snapshot = s
	b.next = s.Seq + 1
}

// addRecord adds the pod's next log record, as readLogRecord found it.
func (b *streamBuilder) addRecord(r logRecord) {
	if r.damage != "" {
		b.fail(Problem{PodUID: b.uid, Seq: r.seq, Detail: r.damage})
		if r.seq == b.next {
			b.next++ // in its place: no gap to report after it
		}
		return
	}
	b.add(r.seq, r.payload)
}

// fail records a problem of the pod; its stream is then not returned.
func (b *streamBuilder) fail(p Problem) { b.problems = append(b.problems, p) }

// add decodes and checks the pod's next record, v (an intact record's
// payload), whose header says it is event seq.
func (b *streamBuilder) add(seq uint64, v []byte) {
	if b.broken {
		return
	}
	e, p := decodeEnvelope(b.uid, seq, v)
	if p != nil {
		b.fail(*p)
		if seq == b.next {
			b.next++ // in its place: no gap to report after it
		}
		return
	}
	switch snap := b.stream.Snapshot; {
	case snap != nil && e.Seq <= snap.Seq:
		b.fail(Problem{PodUID: b.uid, Seq: e.Seq,
			Detail: fmt.Sprintf("event is covered by the snapshot at seq %d but was not compacted", snap.Seq)})
		return
	case e.Seq < b.next:
		b.fail(Problem{PodUID: b.uid, Seq: e.Seq,
			Detail: fmt.Sprintf("seq repeated or out of order: expected seq %d", b.next)})
		return
	case e.Seq > b.next:
		b.fail(Problem{PodUID: b.uid, Seq: e.Seq, Detail: fmt.Sprintf("gap in stream: expected seq %d", b.next)})
	}
	if b.keep {
		b.stream.Events = append(b.stream.Events, e)
	}
	b.next = e.Seq + 1
}

// result returns the stream, or every problem found; the stream is only
// valid if there are none.
func (b *streamBuilder) result() (*Stream, []Problem) {
	if b.problems != nil {
		return nil, b.problems
	}
	return &b.stream, nil
}

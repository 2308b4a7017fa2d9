package journal

import (
	"fmt"

	bolt "go.etcd.io/bbolt"

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

// readStream decodes and checks one pod's stream. events is the pod's bucket
// (nil if none) and snap its stored snapshot (nil if none). Every problem
// found is returned; the stream is only valid if there are none.
func readStream(podUID string, events *bolt.Bucket, snap []byte) (*Stream, []Problem) {
	var (
		s        = new(Stream)
		problems []Problem
		next     = uint64(1)
	)
	if snap != nil {
		sn, p := decodeSnapshot(podUID, snap)
		if p != nil {
			// Without the snapshot's seq the events cannot be checked.
			return nil, []Problem{*p}
		}
		s.Snapshot = sn
		next = sn.Seq + 1
	}
	if events == nil {
		return s, nil
	}
	c := events.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		e, p := decodeEnvelope(podUID, k, v)
		if p != nil {
			problems = append(problems, *p)
			continue
		}
		switch {
		case s.Snapshot != nil && e.Seq <= s.Snapshot.Seq:
			problems = append(problems, Problem{PodUID: podUID, Seq: e.Seq,
				Detail: fmt.Sprintf("event is covered by the snapshot at seq %d but was not compacted", s.Snapshot.Seq)})
			continue
		case e.Seq != next:
			problems = append(problems, Problem{PodUID: podUID, Seq: e.Seq,
				Detail: fmt.Sprintf("gap in stream: expected seq %d", next)})
		}
		s.Events = append(s.Events, e)
		next = e.Seq + 1
	}
	if problems != nil {
		return nil, problems
	}
	return s, nil
}

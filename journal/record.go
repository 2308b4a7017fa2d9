package journal

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	pb "github.com/actorlet/actorlet/proto/actorlet/v1"
)

// marshalOpts makes records byte-for-byte reproducible (PodState has a map).
var marshalOpts = proto.MarshalOptions{Deterministic: true}

// maxPodUIDLen bounds a pod UID: it is a bbolt key.
const maxPodUIDLen = bolt.MaxKeySize

func checkPodUID(podUID string) error {
	if podUID == "" {
		return fmt.Errorf("empty pod UID: %w", ErrInvalid)
	}
	if len(podUID) > maxPodUIDLen {
		return fmt.Errorf("pod UID of %d bytes (max %d): %w", len(podUID), maxPodUIDLen, ErrInvalid)
	}
	return nil
}

// prepareEnvelopes validates the envelopes of one Append call, fills unset
// schema versions and times, and marshals them.
func prepareEnvelopes(podUID string, events []*pb.Envelope, nowNano int64) (first uint64, recs [][]byte, size int, err error) {
	recs = make([][]byte, len(events))
	for i, e := range events {
		switch {
		case e == nil:
			return 0, nil, 0, fmt.Errorf("envelope %d is nil: %w", i, ErrInvalid)
		case e.GetPodUid() != podUID:
			return 0, nil, 0, fmt.Errorf("envelope %d has pod_uid %q: %w", i, e.GetPodUid(), ErrInvalid)
		case e.GetEvent() == nil || e.GetEvent().GetKind() == nil:
			return 0, nil, 0, fmt.Errorf("envelope %d (seq %d) has no event: %w", i, e.GetSeq(), ErrInvalid)
		case e.GetSeq() == 0:
			return 0, nil, 0, fmt.Errorf("envelope %d has seq 0: %w", i, ErrInvalid)
		}
		if e.SchemaVersion == 0 {
			e.SchemaVersion = SchemaVersion
		}
		if e.SchemaVersion != SchemaVersion {
			return 0, nil, 0, fmt.Errorf("envelope seq %d has schema_version %d, want %d: %w",
				e.GetSeq(), e.SchemaVersion, SchemaVersion, ErrSchemaVersion)
		}
		if i == 0 {
			first = e.Seq
		} else if e.Seq != first+uint64(i) {
			return 0, nil, 0, fmt.Errorf("envelope %d has seq %d, want %d (seqs of one call must be consecutive): %w",
				i, e.Seq, first+uint64(i), ErrSequence)
		}
		if e.TimeUnixNano == 0 {
			e.TimeUnixNano = nowNano
		}
		b, err := marshalOpts.Marshal(e)
		if err != nil {
			return 0, nil, 0, fmt.Errorf("marshal envelope seq %d: %w", e.Seq, err)
		}
		recs[i] = b
		size += len(b)
	}
	return first, recs, size, nil
}

// prepareSnapshot validates a snapshot, fills its unset schema version and
// time, and marshals it.
func prepareSnapshot(snap *pb.Snapshot, nowNano int64) ([]byte, error) {
	switch {
	case snap == nil:
		return nil, fmt.Errorf("nil snapshot: %w", ErrInvalid)
	case snap.GetSeq() == 0:
		return nil, fmt.Errorf("snapshot has seq 0: %w", ErrInvalid)
	case snap.GetState() == nil:
		return nil, fmt.Errorf("snapshot seq %d has no state: %w", snap.GetSeq(), ErrInvalid)
	case snap.State.Uid != "" && snap.State.Uid != snap.PodUid:
		return nil, fmt.Errorf("snapshot state has uid %q: %w", snap.State.Uid, ErrInvalid)
	case snap.State.Seq != 0 && snap.State.Seq != snap.Seq:
		return nil, fmt.Errorf("snapshot seq %d but its state has seq %d: %w", snap.Seq, snap.State.Seq, ErrInvalid)
	}
	if snap.SchemaVersion == 0 {
		snap.SchemaVersion = SchemaVersion
	}
	if snap.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("snapshot seq %d has schema_version %d, want %d: %w",
			snap.Seq, snap.SchemaVersion, SchemaVersion, ErrSchemaVersion)
	}
	if snap.TimeUnixNano == 0 {
		snap.TimeUnixNano = nowNano
	}
	b, err := marshalOpts.Marshal(snap)
	if err != nil {
		return nil, fmt.Errorf("marshal snapshot seq %d: %w", snap.Seq, err)
	}
	return b, nil
}

// decodeEnvelope decodes the stored record k → v of pod podUID and checks it
// against its key and bucket.
func decodeEnvelope(podUID string, k, v []byte) (*pb.Envelope, *Problem) {
	seq, ok := parseSeqKey(k)
	if !ok {
		return nil, &Problem{PodUID: podUID, Detail: fmt.Sprintf("key %x is not an 8-byte sequence number", k)}
	}
	if v == nil {
		return nil, &Problem{PodUID: podUID, Seq: seq, Detail: "key holds a bucket, not a record"}
	}
	e := new(pb.Envelope)
	if err := proto.Unmarshal(v, e); err != nil {
		return nil, &Problem{PodUID: podUID, Seq: seq, Detail: fmt.Sprintf("record does not decode: %v", err)}
	}
	switch {
	case e.SchemaVersion != SchemaVersion:
		return nil, &Problem{PodUID: podUID, Seq: seq, Detail: fmt.Sprintf("record has unknown schema_version %d", e.SchemaVersion)}
	case e.PodUid != podUID:
		return nil, &Problem{PodUID: podUID, Seq: seq, Detail: fmt.Sprintf("record has pod_uid %q", e.PodUid)}
	case e.Seq != seq:
		return nil, &Problem{PodUID: podUID, Seq: seq, Detail: fmt.Sprintf("record has seq %d", e.Seq)}
	case e.Event == nil:
		return nil, &Problem{PodUID: podUID, Seq: seq, Detail: "record has no event"}
	}
	return e, nil
}

// decodeSnapshot decodes the stored snapshot of pod podUID and checks it.
func decodeSnapshot(podUID string, v []byte) (*pb.Snapshot, *Problem) {
	s := new(pb.Snapshot)
	if err := proto.Unmarshal(v, s); err != nil {
		return nil, &Problem{PodUID: podUID, Detail: fmt.Sprintf("snapshot does not decode: %v", err)}
	}
	switch {
	case s.SchemaVersion != SchemaVersion:
		return nil, &Problem{PodUID: podUID, Detail: fmt.Sprintf("snapshot has unknown schema_version %d", s.SchemaVersion)}
	case s.PodUid != podUID:
		return nil, &Problem{PodUID: podUID, Detail: fmt.Sprintf("snapshot has pod_uid %q", s.PodUid)}
	case s.Seq == 0:
		return nil, &Problem{PodUID: podUID, Detail: "snapshot has seq 0"}
	}
	return s, nil
}

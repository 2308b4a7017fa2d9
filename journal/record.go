package journal

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"k8s.io/utils/clock"

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
// schema versions and times (reading clk once, only if a time is unset),
// and encodes them into b: one record per envelope in b.recs.
//
// Each record is framed (see frame.go) with its head CRC and the part of its
// body CRC that does not depend on its log key: the writer adds the key
// (sealKey) when it numbers the record.
func prepareEnvelopes(podUID string, events []*pb.Envelope, clk clock.PassiveClock, b *encodeBuffers) (first uint64, err error) {
	nowNano := int64(0)
	for i, e := range events {
		switch {
		case e == nil:
			return 0, fmt.Errorf("envelope %d is nil: %w", i, ErrInvalid)
		case e.GetPodUid() != podUID:
			return 0, fmt.Errorf("envelope %d has pod_uid %q: %w", i, e.GetPodUid(), ErrInvalid)
		case e.GetEvent() == nil || e.GetEvent().GetKind() == nil:
			return 0, fmt.Errorf("envelope %d (seq %d) has no event: %w", i, e.GetSeq(), ErrInvalid)
		case e.GetSeq() == 0:
			return 0, fmt.Errorf("envelope %d has seq 0: %w", i, ErrInvalid)
		}
		if e.SchemaVersion == 0 {
			e.SchemaVersion = SchemaVersion
		}
		if e.SchemaVersion != SchemaVersion {
			return 0, fmt.Errorf("envelope seq %d has schema_version %d, want %d: %w",
				e.GetSeq(), e.SchemaVersion, SchemaVersion, ErrSchemaVersion)
		}
		if i == 0 {
			first = e.Seq
		} else if e.Seq != first+uint64(i) {
			return 0, fmt.Errorf("envelope %d has seq %d, want %d (seqs of one call must be consecutive): %w",
				i, e.Seq, first+uint64(i), ErrSequence)
		}
		if e.TimeUnixNano == 0 {
			if nowNano == 0 {
				nowNano = clk.Now().UnixNano()
			}
			e.TimeUnixNano = nowNano
		}
		if _, err := b.encode(podUID, e); err != nil {
			return 0, fmt.Errorf("marshal envelope seq %d: %w", e.Seq, err)
		}
	}
	return first, nil
}

// encodeBuffers are what an Append's records are encoded into. A pooled
// request carries them from one Append to the next, so that appends of
// records no larger than earlier ones encode without allocating.
//
// The records are handed to bbolt, which keeps referring to them until the
// transaction ends; the buffers may be reused (reset) only once the request
// has its outcome.
type encodeBuffers struct {
	// recs are the encoded records: sub-slices of buf, or of an array buf
	// had before it grew (which they keep alive).
	recs [][]byte
	// one is where recs points while it holds one record (most appends):
	// in the request itself, next to recs, not in an array of its own.
	one [1][]byte
	// buf holds the records back to back.
	buf []byte
	// head holds the input of the head CRC (see headCRCString).
	head []byte
}

// maxKeptBuffer bounds the buffer a pooled request keeps between appends:
// a rare large record (a big pod spec) is not pinned by the pool.
const maxKeptBuffer = 64 << 10

// maxKeptRecs bounds the records slice a pooled request keeps.
const maxKeptRecs = 64

// encode frames and marshals the envelope of pod podUID at the end of b.buf
// and adds it to b.recs, sealed but for its key.
func (b *encodeBuffers) encode(podUID string, e *pb.Envelope) ([]byte, error) {
	at := len(b.buf)
	b.buf = append(b.buf, frameMagic, 0, 0, 0, 0, 0, 0, 0, 0)
	buf, err := marshalOpts.MarshalAppend(b.buf, e)
	if err != nil {
		b.buf = b.buf[:at]
		return nil, err
	}
	b.buf = buf
	// The record's capacity ends with it: sealing it never touches the next.
	rec := buf[at:len(buf):len(buf)]
	var h uint32
	h, b.head = headCRCString(b.head, podUID, e.Seq)
	sealHead(rec, h)
	b.recs = append(b.recs, rec)
	return rec, nil
}

// reset empties b for the next request, keeping its arrays unless large.
func (b *encodeBuffers) reset() {
	clear(b.recs)
	b.recs = b.recs[:0]
	if cap(b.recs) > maxKeptRecs {
		b.recs = b.one[:0]
	}
	if cap(b.buf) > maxKeptBuffer {
		b.buf = nil
	}
	b.buf = b.buf[:0]
	if cap(b.head) > maxKeptBuffer {
		b.head = nil
	}
	b.head = b.head[:0]
}

// prepareSnapshot validates a snapshot, fills its unset schema version and
// time, and marshals and frames it (its key, the pod UID, is known).
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
	b, err := marshalOpts.MarshalAppend(newFrame(0), snap)
	if err != nil {
		return nil, fmt.Errorf("marshal snapshot seq %d: %w", snap.Seq, err)
	}
	uid := []byte(snap.PodUid)
	sealPartial(b, uid, snap.Seq)
	sealKey(b, uid)
	return b, nil
}

// Field numbers of the header fields, shared by Envelope and Snapshot
// (checked at init).
var (
	fieldSeq    = fieldNumber(&pb.Envelope{}, "seq")
	fieldPodUID = fieldNumber(&pb.Envelope{}, "pod_uid")
)

func init() {
	if fieldNumber(&pb.Snapshot{}, "seq") != fieldSeq || fieldNumber(&pb.Snapshot{}, "pod_uid") != fieldPodUID {
		panic("journal: Envelope and Snapshot number seq and pod_uid differently")
	}
}

func fieldNumber(m proto.Message, name protoreflect.Name) protowire.Number {
	f := m.ProtoReflect().Descriptor().Fields().ByName(name)
	if f == nil {
		panic(fmt.Sprintf("journal: %s has no field %s", m.ProtoReflect().Descriptor().FullName(), name))
	}
	return f.Number()
}

// readHeader returns the pod_uid and seq of a stored envelope or snapshot
// from the top-level fields of its protobuf encoding, without decoding the
// rest: the open-time index needs nothing else. As proto.Unmarshal does, a
// field that occurs twice counts with its last value. The uid aliases v.
func readHeader(v []byte) (uid []byte, seq uint64, err error) {
	for len(v) > 0 {
		num, typ, n := protowire.ConsumeTag(v)
		if n < 0 {
			return nil, 0, protowire.ParseError(n)
		}
		v = v[n:]
		switch {
		case num == fieldSeq && typ == protowire.VarintType:
			seq, n = protowire.ConsumeVarint(v)
		case num == fieldPodUID && typ == protowire.BytesType:
			uid, n = protowire.ConsumeBytes(v)
		default:
			n = protowire.ConsumeFieldValue(num, typ, v)
		}
		if n < 0 {
			return nil, 0, protowire.ParseError(n)
		}
		v = v[n:]
	}
	switch {
	case len(uid) == 0:
		return nil, 0, errors.New("no pod_uid")
	case seq == 0:
		return nil, 0, errors.New("no seq")
	}
	return uid, seq, nil
}

// knownRecordSchema reports whether a record of this schema_version reads
// as this build's.
func knownRecordSchema(v uint32) bool {
	return v >= minRecordSchema && v <= SchemaVersion
}

// decodeEnvelope decodes the payload v of an intact stored record, whose
// header says it is event seq of pod podUID, and checks it.
func decodeEnvelope(podUID string, seq uint64, v []byte) (*pb.Envelope, *Problem) {
	e := new(pb.Envelope)
	if err := proto.Unmarshal(v, e); err != nil {
		return nil, &Problem{PodUID: podUID, Seq: seq, Detail: fmt.Sprintf("record does not decode: %v", err)}
	}
	switch {
	case !knownRecordSchema(e.SchemaVersion):
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

// decodeSnapshot decodes the payload of pod podUID's intact stored snapshot
// and checks it.
func decodeSnapshot(podUID string, v []byte) (*pb.Snapshot, *Problem) {
	s := new(pb.Snapshot)
	if err := proto.Unmarshal(v, s); err != nil {
		return nil, &Problem{PodUID: podUID, Detail: fmt.Sprintf("snapshot does not decode: %v", err)}
	}
	switch {
	case !knownRecordSchema(s.SchemaVersion):
		return nil, &Problem{PodUID: podUID, Detail: fmt.Sprintf("snapshot has unknown schema_version %d", s.SchemaVersion)}
	case s.PodUid != podUID:
		return nil, &Problem{PodUID: podUID, Detail: fmt.Sprintf("snapshot has pod_uid %q", s.PodUid)}
	case s.Seq == 0:
		return nil, &Problem{PodUID: podUID, Detail: "snapshot has seq 0"}
	}
	return s, nil
}

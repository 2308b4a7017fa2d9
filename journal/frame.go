package journal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Every value of a schema version 3 file (log records, snapshots and meta
// values) is framed with checksums, as etcd's WAL checksums its records:
//
//	byte 0     frameMagic (0xA3)
//	bytes 1-4  body CRC: CRC-32C (Castagnoli), big-endian, of
//	           byte 0 || bytes 5.. || the value's bbolt key
//	bytes 5-8  head CRC: CRC-32C of the record's pod UID || its seq as 8
//	           bytes big-endian (log records and snapshots; 0 for meta)
//	bytes 9..  payload: the protobuf record (or the meta text)
//
// The body CRC covers every byte of the value but itself, and the key, so a
// flip anywhere in a value or its key is detected. The head CRC says whose
// a damaged record is: when the body CRC fails, the pod UID and seq read
// from the payload are believed only if they match the head CRC (the damage
// is elsewhere), or if flipping one bit of the payload's first bytes makes
// them match (the damage is a single bit in the header, which is repaired
// for naming only). Otherwise the record's pod cannot be told.
const (
	frameMagic   = 0xA3
	frameLen     = 9
	frameBodyAt  = 1
	frameHeadAt  = 5
	headKeyBytes = 8
)

// headerRepairScan is how many payload bytes a damaged record's header is
// searched for a single flipped bit: the header fields (schema_version,
// seq, time_unix_nano, pod_uid) come first in the deterministic encoding.
const headerRepairScan = 32 + 2*36

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// headCRC is the head CRC of pod uid's record seq.
func headCRC(uid []byte, seq uint64) uint32 {
	var s [headKeyBytes]byte
	binary.BigEndian.PutUint64(s[:], seq)
	return crc32.Update(crc32.Checksum(uid, castagnoli), castagnoli, s[:])
}

// headCRCString is headCRC for a UID held in a string. It writes the CRC's
// input (uid || seq) into scratch and returns scratch for reuse: crc32
// keeps no reference, and with a scratch kept by the caller (a pooled
// request's) the append path does not allocate for it (headCRC's own
// buffer escapes through crc32's indirect call).
func headCRCString(scratch []byte, uid string, seq uint64) (uint32, []byte) {
	scratch = binary.BigEndian.AppendUint64(append(scratch[:0], uid...), seq)
	return crc32.Checksum(scratch, castagnoli), scratch
}

// newFrame returns a buffer with room for the frame before a payload that
// the caller appends (capacity for size payload bytes).
func newFrame(size int) []byte {
	b := make([]byte, frameLen, frameLen+size)
	b[0] = frameMagic
	return b
}

// sealPartial fills in the head CRC of the framed value v (payload
// appended) and the body CRC without the key: v is then ready for
// sealKey. It runs in the caller's goroutine; sealKey, in the writer, only
// adds the 8 bytes of the key.
func sealPartial(v []byte, uid []byte, seq uint64) {
	h := uint32(0)
	if uid != nil {
		h = headCRC(uid, seq)
	}
	sealHead(v, h)
}

// sealHead is sealPartial with the head CRC h already computed.
func sealHead(v []byte, h uint32) {
	binary.BigEndian.PutUint32(v[frameHeadAt:], h)
	binary.BigEndian.PutUint32(v[frameBodyAt:], partialBodyCRC(v))
}

// sealKey completes the body CRC of a value that sealPartial prepared with
// its key. It must be called once per value.
func sealKey(v, key []byte) {
	p := binary.BigEndian.Uint32(v[frameBodyAt:])
	binary.BigEndian.PutUint32(v[frameBodyAt:], crc32.Update(p, castagnoli, key))
}

// seal frames payload for key in one step (migration, meta values, tests).
func seal(key, payload []byte, uid []byte, seq uint64) []byte {
	v := append(newFrame(len(payload)), payload...)
	sealPartial(v, uid, seq)
	sealKey(v, key)
	return v
}

// sealMeta frames a meta value.
func sealMeta(key []byte, text string) []byte { return seal(key, []byte(text), nil, 0) }

func partialBodyCRC(v []byte) uint32 {
	return crc32.Update(crc32.Checksum(v[:1], castagnoli), castagnoli, v[frameHeadAt:])
}

// bodyOK reports whether the framed value v of key is intact.
func bodyOK(key, v []byte) bool {
	if len(v) < frameLen || v[0] != frameMagic {
		return false
	}
	return crc32.Update(partialBodyCRC(v), castagnoli, key) == binary.BigEndian.Uint32(v[frameBodyAt:])
}

// openMeta returns the text of the framed meta value v of key.
func openMeta(key, v []byte) ([]byte, error) {
	if !bodyOK(key, v) {
		return nil, fmt.Errorf("meta value %q fails its checksum", key)
	}
	return v[frameLen:], nil
}

// opened is what openRecord learnt of a stored log record or snapshot.
type opened struct {
	// payload is the protobuf record (aliases the value); valid only if
	// intact.
	payload []byte
	// intact: the body CRC matches; uid and seq are the record's header.
	intact bool
	// told: uid and seq name the record's pod and seq, though the record
	// may be damaged (then damage says how).
	told   bool
	uid    []byte
	seq    uint64
	damage string
}

// openRecord checks the framed record v stored under key (a log record or
// snapshot) and reads its header.
func openRecord(key, v []byte) opened {
	if bodyOK(key, v) {
		p := v[frameLen:]
		uid, seq, err := readHeader(p)
		switch {
		case err != nil:
			return opened{damage: fmt.Sprintf("intact record does not decode (%v)", err)}
		case headCRC(uid, seq) != binary.BigEndian.Uint32(v[frameHeadAt:]):
			return opened{damage: "intact record's header does not match its head CRC"}
		}
		return opened{payload: p, intact: true, told: true, uid: uid, seq: seq}
	}
	o := opened{damage: "record fails its checksum (CRC-32C)"}
	if len(v) < frameLen {
		o.damage = fmt.Sprintf("record of %d bytes is shorter than its frame", len(v))
		return o
	}
	if v[0] != frameMagic {
		o.damage = fmt.Sprintf("record has frame byte %#x, want %#x (damaged or not framed)", v[0], frameMagic)
	}
	want := binary.BigEndian.Uint32(v[frameHeadAt:])
	p := v[frameLen:]
	if uid, seq, err := readHeader(p); err == nil {
		if headCRC(uid, seq) == want {
			o.told, o.uid, o.seq = true, bytes.Clone(uid), seq
			return o
		}
		// The head CRC itself may be the damaged part: then putting the
		// header's CRC in its place makes the body intact.
		w := bytes.Clone(v)
		binary.BigEndian.PutUint32(w[frameHeadAt:], headCRC(uid, seq))
		if bodyOK(key, w) {
			o.told, o.uid, o.seq = true, bytes.Clone(uid), seq
			o.damage = "record's head CRC is damaged"
			return o
		}
	}
	if uid, seq, ok := repairHeader(p, want); ok {
		o.told, o.uid, o.seq = true, uid, seq
		o.damage += "; its header has a flipped bit (repaired to name the pod)"
	}
	return o
}

// repairHeader looks for the one bit in the payload's first bytes whose
// flip gives a header matching the head CRC want. It reports a header only
// if exactly one flip does.
func repairHeader(p []byte, want uint32) (uid []byte, seq uint64, ok bool) {
	w := bytes.Clone(p) // p may be bbolt's read-only mapping
	n := min(len(w), headerRepairScan)
	found := 0
	for i := 0; i < n; i++ {
		for bit := 0; bit < 8; bit++ {
			w[i] ^= 1 << bit
			if u, s, err := readHeader(w); err == nil && headCRC(u, s) == want {
				if found == 0 || !bytes.Equal(u, uid) || s != seq {
					found++
					uid, seq = bytes.Clone(u), s
				}
			}
			w[i] ^= 1 << bit
		}
	}
	return uid, seq, found == 1
}

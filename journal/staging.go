package journal

import (
	"encoding/binary"
	"fmt"
)

// staging applies one batch's changes to the index, so that later requests
// of the batch see earlier ones, and so that the changes can be made visible
// or dropped depending on the transaction's outcome. It has two modes, as
// Journal.commit explains:
//
//   - Append-only batches (the hot path) run while readers use the index,
//     so they do not change it: the batch's records wait in refs (and new
//     pods in fresh), and each entry the batch appended to remembers, in
//     the writer's own fields, the seq it now ends at. publish adds the
//     records to the index (write-locked) after the commit; rollback just
//     forgets them.
//   - Batches with a snapshot or a delete hold the index write-locked for
//     their whole transaction, so they change it in place, saving each
//     entry before its first change; rollback restores the saved entries.
type staging struct {
	x         *podIndex
	id        uint64 // marks the entries this batch touched (podEntry.batch)
	exclusive bool
	// next is the key of the next record appended.
	next uint64
	// records is the number of records appended minus those removed.
	records int
	// touched are the appends of an append-only batch, in order.
	touched []touch
	// undo is the undo log of an exclusive batch, in order.
	undo []undo
	// fresh holds the pods that are new in an append-only batch.
	fresh map[string]*podEntry
	// refs are the records appended by the batch (append-only: the touches
	// point into it), or the records of one append (exclusive).
	refs []recRef

	// puts are the records staged by the batch, in log order, with their
	// keys: what the transaction puts in the log (append-only), or what
	// the append being applied puts (from its start on; exclusive).
	puts []logPut

	// keys holds the log keys put by the batch: bbolt keeps the slices it
	// is given until the commit, so the buffer is reused only by the next
	// batch.
	keys []byte
}

// logPut is one record to put at the end of the log.
type logPut struct{ key, rec []byte }

// describe names the record for an error: its number, and its pod and seq
// as its header tells.
func (p logPut) describe() string {
	n, _ := parseLogKey(p.key)
	if uid, seq, err := readHeader(p.rec[frameLen:]); err == nil {
		return fmt.Sprintf("pod %q: record #%d (seq %d)", uid, n, seq)
	}
	return fmt.Sprintf("record #%d", n)
}

// touch is one append of an append-only batch: the records s.refs[from:to]
// go to e, the entry of pod uid; fresh if e is not in the index yet.
type touch struct {
	uid      string
	e        *podEntry
	fresh    bool
	from, to int
}

// undo restores one entry changed by an exclusive batch: e was old before the
// batch, or was not in the index (fresh).
type undo struct {
	uid   string
	e     *podEntry
	fresh bool
	old   podEntry
}

// begin starts the staging of a new batch, reusing the buffers.
func (s *staging) begin(x *podIndex, exclusive bool) {
	s.x, s.id, s.exclusive = x, s.id+1, exclusive
	s.next, s.records = x.lastKey+1, 0
	clear(s.touched)
	s.touched = s.touched[:0]
	clear(s.undo)
	s.undo = s.undo[:0]
	clear(s.fresh)
	s.refs = s.refs[:0]
	clear(s.puts)
	s.puts = s.puts[:0]
	s.keys = s.keys[:0]
}

// nextKey returns the number and log key of the next record; the key stays
// valid until the transaction ends.
func (s *staging) nextKey() (n uint64, key []byte) {
	if len(s.keys)+logKeyLen > cap(s.keys) {
		// A new buffer: the keys in the old one are still in use.
		s.keys = make([]byte, 0, max(4096, 2*cap(s.keys)))
	}
	n = s.next
	s.next++
	at := len(s.keys)
	s.keys = binary.BigEndian.AppendUint64(s.keys, n)
	return n, s.keys[at:len(s.keys):len(s.keys)]
}

// stageAppend checks the append r against its pod's stream as the batch
// sees it, numbers its records, seals each record's key into it and stages
// them: they are s.puts from its length before the call on. rejected is the
// request's own failure (its pod's stored snapshot is damaged, its first
// seq does not follow): it then stages nothing.
func (s *staging) stageAppend(r *request) (rejected error) {
	e := s.entry(r.uid)
	if e != nil && e.snapProblem != "" {
		return fmt.Errorf("append to pod %q: %w: %s", r.uid, ErrCorrupt, e.snapProblem)
	}
	if last := s.lastSeq(e); r.first != last+1 {
		return fmt.Errorf("append to pod %q: first seq %d does not follow the stored seq %d: %w",
			r.uid, r.first, last, ErrSequence)
	}
	from := len(s.refs)
	for i, rec := range r.recs {
		n, k := s.nextKey()
		sealKey(rec, k) // once: a request is staged in one batch only
		s.puts = append(s.puts, logPut{key: k, rec: rec})
		s.refs = append(s.refs, recRef{seq: r.first + uint64(i), key: n})
	}
	s.appendRecords(r.uid, e, from)
	return nil
}

// entry returns the pod's entry as the batch sees it, nil if none.
func (s *staging) entry(uid string) *podEntry {
	if e := s.x.pods[uid]; e != nil {
		return e
	}
	return s.fresh[uid]
}

// lastSeq is the seq of the pod's last record as the batch sees it.
func (s *staging) lastSeq(e *podEntry) uint64 {
	switch {
	case e == nil:
		return 0
	case !s.exclusive && e.batch == s.id:
		return e.pendingLast
	}
	return e.last
}

// save records e in the undo log before the batch first changes it
// (exclusive).
func (s *staging) save(uid string, e *podEntry) {
	if e.batch != s.id {
		e.batch = s.id
		s.undo = append(s.undo, undo{uid: uid, e: e, old: *e})
	}
}

// appendRecords adds the records s.refs[from:], which the transaction has
// put, to the pod; e is the pod's entry (s.entry).
func (s *staging) appendRecords(uid string, e *podEntry, from int) {
	recs := s.refs[from:]
	last := recs[len(recs)-1].seq
	s.records += len(recs)
	if s.exclusive {
		if e == nil {
			e = &podEntry{batch: s.id}
			s.x.pods[uid] = e
			s.undo = append(s.undo, undo{uid: uid, e: e, fresh: true})
		} else {
			s.save(uid, e)
		}
		e.recs = append(e.recs, recs...)
		e.last = last
		s.refs = s.refs[:from]
		return
	}
	fresh := e == nil
	if fresh {
		e = new(podEntry)
		if s.fresh == nil {
			s.fresh = make(map[string]*podEntry)
		}
		s.fresh[uid] = e
	}
	e.batch, e.pendingLast = s.id, last
	s.touched = append(s.touched, touch{uid: uid, e: e, fresh: fresh, from: from, to: len(s.refs)})
}

// compact sets the pod's snapshot to seq and drops the records it covers,
// returning their keys (exclusive only).
func (s *staging) compact(uid string, e *podEntry, seq uint64) (dropped []uint64) {
	s.save(uid, e)
	var kept []recRef
	for _, r := range e.recs {
		if r.seq <= seq {
			dropped = append(dropped, r.key)
		} else {
			kept = append(kept, r)
		}
	}
	e.hasSnap, e.snapSeq, e.snapProblem, e.recs, e.last = true, seq, "", kept, seq
	if n := len(kept); n > 0 {
		e.last = kept[n-1].seq
	}
	s.records -= len(dropped)
	return dropped
}

// remove drops the pod from the index, returning the keys of its records
// and the key its snapshot is stored under if not uid (exclusive only).
func (s *staging) remove(uid string) (dropped []uint64, snapKey string) {
	e := s.x.pods[uid]
	if e == nil {
		return nil, ""
	}
	s.save(uid, e)
	for _, r := range e.recs {
		dropped = append(dropped, r.key)
	}
	delete(s.x.pods, uid)
	s.records -= len(dropped)
	return dropped, e.snapKey
}

// publish makes the committed batch's changes part of the index; the caller
// holds the index write-locked.
func (s *staging) publish() {
	if !s.exclusive {
		for _, t := range s.touched {
			recs := s.refs[t.from:t.to]
			t.e.recs = append(t.e.recs, recs...)
			t.e.last = recs[len(recs)-1].seq
			if t.fresh {
				s.x.pods[t.uid] = t.e
			}
		}
	}
	s.x.records += s.records
	s.x.lastKey = max(s.x.lastKey, s.next-1)
}

// rollback drops the changes of a batch whose transaction failed; for an
// exclusive batch, the caller still holds the index write-locked.
func (s *staging) rollback() {
	if !s.exclusive {
		return // the batch changed nothing that counts
	}
	for i := len(s.undo) - 1; i >= 0; i-- {
		t := s.undo[i]
		if t.fresh {
			delete(s.x.pods, t.uid)
			continue
		}
		*t.e = t.old
		s.x.pods[t.uid] = t.e
	}
}

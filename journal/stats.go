package journal

import (
	"sync/atomic"
	"time"
)

// Stats are counters since Open, for metrics and benchmarks.
type Stats struct {
	// Commits is the number of write transactions committed.
	Commits uint64
	// FailedCommits is the number of write transactions that failed; each
	// failed every request in it.
	FailedCommits uint64
	// Requests is the number of Append, SaveSnapshot and Delete calls
	// committed. Requests/Commits is the average group-commit size.
	Requests uint64
	// Rejected is the number of requests refused by the writer without
	// writing (ErrSequence, damaged stored records of their pod).
	Rejected uint64
	// Records is the number of envelopes committed.
	Records uint64
	// Bytes is the size of the envelopes and snapshots committed.
	Bytes uint64
	// Fsyncs is the number of commits made durable. bbolt syncs twice per
	// commit (data pages, then the meta page) and again when the file
	// grows; 0 with NoSync.
	Fsyncs uint64
	// LargestBatch is the most requests committed in one transaction.
	LargestBatch uint64
	// CommitTime is the time spent in write transactions, committed or
	// failed, fsyncs included, on the journal's clock. CommitTime divided by
	// Commits+FailedCommits is the mean time one group commit holds its
	// appenders.
	CommitTime time.Duration
}

// stats are the live counters behind Stats.
type stats struct {
	commits, failedCommits, requests, rejected, records, bytes, fsyncs, largestBatch atomic.Uint64
	commitNanos                                                                      atomic.Int64
}

// recordCommit counts a committed transaction (called by the writer only).
func (s *stats) recordCommit(requests, records, bytes int, synced bool) {
	s.commits.Add(1)
	s.requests.Add(uint64(requests))
	s.records.Add(uint64(records))
	s.bytes.Add(uint64(bytes))
	if synced {
		s.fsyncs.Add(1)
	}
	if uint64(requests) > s.largestBatch.Load() {
		s.largestBatch.Store(uint64(requests))
	}
}

// Stats returns the journal's counters.
func (j *Journal) Stats() Stats {
	s := &j.stats
	return Stats{
		Commits:       s.commits.Load(),
		FailedCommits: s.failedCommits.Load(),
		Requests:      s.requests.Load(),
		Rejected:      s.rejected.Load(),
		Records:       s.records.Load(),
		Bytes:         s.bytes.Load(),
		Fsyncs:        s.fsyncs.Load(),
		LargestBatch:  s.largestBatch.Load(),
		CommitTime:    time.Duration(s.commitNanos.Load()),
	}
}

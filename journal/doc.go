// Package journal is actorlet's durable event journal: for every pod, the
// stream of events its PodActor decided, and at most one snapshot that
// replaces the stream's beginning. It is the only place where the node
// remembers what it intended and already did (attempts, restart counts,
// backoff deadlines, termination progress). It is one bbolt file,
// <dir>/journal.db (directory mode 0700, file mode 0600).
//
// # Durable before visible
//
// Append, SaveSnapshot and Delete return nil only once their change is
// committed and fsynced; then it survives a crash of the process or of the
// machine. On error nothing of the call is visible (all or nothing per call):
// a PodActor whose append failed must not act on the events, and recovers
// by Load. (After an I/O error during the commit, the file may nonetheless
// hold the batch on the next Open: the state on disk is then either before or
// after the call, never half of it.) With Options.NoSync, fsync is skipped and
// none of this holds: benchmarks and tests only.
//
// Reads (Load, LoadAll, Pods, Verify) see exactly the calls that have
// returned nil (and possibly some whose commit is in progress).
//
// # Group commit
//
// One writer goroutine owns every write transaction. Append validates and
// marshals its envelopes in the caller's goroutine, queues a request (a
// lock-free push) and waits. The writer takes everything queued (up to
// Options.MaxBatch envelopes), applies it in one bbolt transaction and
// commits it — one fsync for many pods — then sets each request's outcome
// and wakes the batch's callers at once (one closed channel). There is
// no timer: an idle writer commits the first request at once, and requests
// arriving during a commit form the next one. A request refused by the
// writer (ErrSequence) writes nothing and fails alone; the other requests of
// its transaction commit. A failed commit (an I/O error, a full disk) fails
// every request in it; the journal stays usable if bbolt does.
//
// Every record of a commit is appended at the end of one log (see the
// layout), so a commit dirties a couple of leaf pages however many pods it
// touches.
//
// Sequence numbers are assigned by the caller — the PodActor, the only writer
// of its pod. The journal checks that each Append continues the pod's stream
// (first seq = last stored seq + 1), which also catches two writers for one
// pod.
//
// Context: a request whose ctx ends while it waits in the queue is dropped
// and never written; the call returns ctx's error. Once the writer has taken
// it, the call waits for that one commit and returns its outcome. An error
// wrapping ctx.Err() therefore always means "not written".
//
// Close commits everything already queued, then stops the writer and closes
// the file; later calls fail with ErrClosed.
//
// # File layout (schema version 3)
//
//	journal.db (bbolt)     every value is framed: [frame] = magic, body CRC, head CRC (frame.go)
//	├── meta                         bucket
//	│   ├── "schema"   → [frame]"3"  SchemaVersion, decimal ASCII
//	│   ├── "created"  → [frame]RFC 3339    UTC creation time (Options.Clock)
//	│   └── "migrated" → [frame]text only in a file migrated from schema 1 or 2
//	├── log                          bucket, append-only (FillPercent 1.0)
//	│   ├── 00 00 00 00 00 00 00 01 → [frame]Envelope   key: record number, 8 bytes big-endian
//	│   ├── 00 00 00 00 00 00 00 02 → [frame]Envelope   (pod_uid and seq are in the record)
//	│   └── ...
//	└── snapshots                    bucket
//	    └── <pod UID> → [frame]Snapshot     at most one per pod
//
// The writer numbers records 1, 2, 3, ... in commit order: each commit adds
// its records at the end of the log, and the records of all pods are
// interleaved there. A pod's records are in seq order in the log. A pod
// exists in the journal if it has records or a snapshot. Its stream is the
// snapshot (if any) followed by its records with seq snapshot.seq+1, +2, ...
// (or 1, 2, ... without snapshot), without gaps. SaveSnapshot writes the
// snapshot and deletes the records it covers in one transaction, so no
// record with seq <= snapshot.seq remains; Delete removes all of the pod's
// records and its snapshot. Record numbers only grow in commit order and are
// never used twice: the log bucket's sequence keeps the largest one used
// (files written before it start from their largest key). They are the
// cursor of Records and Follow (follow.go), which hand out the log in order
// to event handlers.
//
// Schema version 2 (this layout without frames) is migrated by Open, in one
// transaction: every value is framed as it is (migrateV2). Schema version 1
// (the first layout: a bucket per pod under "pods", keyed by seq) is
// migrated by Open to version 2, in one transaction, and then to 3: the
// records move to the log unchanged, pod after pod. A version 1 file with a record
// that would not keep its pod and seq in the log (its key is not a seq, its
// header does not decode or names another pod or seq) is not migrated but
// quarantined (see Damaged files). OpenReadOnly refuses a version 1 or 2 file
// with ErrSchemaVersion. See migrate.go.
//
// # In-memory index
//
// Open reads the header (pod_uid and seq, not the event) of every record once,
// in one sequential pass over the log, and keeps for each pod the record
// numbers of its records and its snapshot's seq: about 16 bytes per record
// plus a small entry per pod (a 100,000-record journal opens in tens of
// milliseconds). The writer keeps the index up to date. Append's sequence
// check reads only the index; Load reads the pod's records by number;
// LoadAll and Verify read the whole log in one pass and do not depend on the
// index (Verify checks that it matches the file).
//
// # Record format
//
// A value's payload is the protobuf binary encoding (proto3, deterministic)
// of actorlet.v1.Envelope and actorlet.v1.Snapshot from
// proto/actorlet/v1/events.proto, behind a 9-byte frame (frame.go). Every record carries its
// schema_version, its seq and its pod_uid; a log record's pod is the one its
// pod_uid names, and a snapshot's pod_uid must be its key. This build writes
// schema_version SchemaVersion (3) and reads 1, 2 and 3 alike (the encoding
// did not change between them; migrated records keep theirs). events.proto only
// ever gains fields; a change that old code could misread would bump
// SchemaVersion. A file or record with a newer schema version is refused
// (ErrSchemaVersion) rather than misread.
//
// # Checksums
//
// bbolt checksums only its own meta pages. The journal checksums every value
// (frame.go), as etcd's WAL does its records: byte 0 is 0xA3; bytes 1-4 the
// body CRC, CRC-32C (Castagnoli) of every other byte of the value and of its
// bbolt key; bytes 5-8 the head CRC, CRC-32C of the record's pod UID and
// seq. Every read checks them: Open's index build, Load, LoadAll, Verify,
// and the open-time check of the meta values. Guarantees:
//
//   - Any single-bit change of a value or of its key (a log record number,
//     a snapshot's pod UID) is detected: no such change alters what Load or
//     LoadAll return without a Problem (TestEverySingleBitFlipIsDetectedOrHarmless
//     flips 400 seeded bits of a churned file; all were detected).
//   - A damaged record is named: its pod and seq when its head CRC tells
//     them — the damage is elsewhere in the value, or it is one flipped bit
//     of the header, found by trying each bit of the payload's first 104
//     bytes (for naming only; the record is never used) — else its record
//     number, as a problem of the file (see Damaged files). A snapshot
//     stored under a damaged key is named for the pod its head CRC tells;
//     Delete of that pod removes it.
//   - Intact checksums cover the key, and the pod UID and seq inside a
//     record are also checked against it (a snapshot's key is its pod_uid).
//   - A meta value that fails its checksum makes the file damaged as a
//     whole: Open quarantines it, OpenReadOnly refuses it.
//   - Page-level damage that bbolt's own checks see (Tx.Check, a file
//     shorter than its pages, a panic on a damaged page) leads to quarantine
//     as before.
//
// Damage of more than one bit is detected with CRC-32C's usual strength (all
// bursts up to 32 bits, otherwise all but about 1 in 2^32), but its pod may
// not be told.
//
// The cost: the head CRC and the body CRC up to the key are computed in the
// caller's goroutine while marshalling; the writer adds only the 8 bytes of
// the record number (sealKey). BenchmarkChecksum measures it.
//
// # Damaged files
//
// Open checks the file before use: bbolt opens it, the file is as long as
// its pages claim, bbolt's page-level consistency check (Tx.Check) passes,
// and the meta bucket holds a known schema version. If not, Open renames the
// file to journal.db.corrupt-<UTC time YYYYmmddTHHMMSSZ> (never deleting or
// overwriting one), logs an error, and starts a fresh empty journal;
// Journal.Quarantined reports it so that the caller can raise it loudly and
// rebuild from the pod sources and the container runtime. OpenReadOnly never
// moves anything and fails with ErrCorrupt instead. Verify additionally
// decodes and checks every record. Load and LoadAll report damaged pods with
// a *CorruptError instead of returning a wrong stream. bbolt panics on some
// damaged pages; the journal turns those panics (and faults on the mapping of
// a truncated file) into ErrCorrupt errors.
//
// A log record whose pod cannot be told (its key is not a record number, or
// it fails its checksums and its head CRC names no pod) cannot be told
// apart from any pod's last event. It is a problem of
// the file (Problem.PodUID empty): Verify and LoadAll report it, and Load
// fails for every pod with a *CorruptError while the file holds it (nothing
// removes it; the file has to be replaced). A record whose pod can be told
// but that fails its checksum, or whose event does not decode, is a problem
// of its pod only: LoadAll leaves the pod out of its map and names it in
// CorruptError.Problems (PodUID, Seq).
//
// # Reading a running node's journal
//
// A running node holds the file's lock, so tools cannot open it. The node
// serves its journal over HTTP on <dir>/journal.sock instead (Serve; mode
// 0600, so only the node's user may connect): GET /journal.db answers a
// complete bbolt file written from one read transaction (Tx.WriteTo), which
// FetchCopy stores and OpenReadOnly opens (`actorlet journal` does so when
// the file is locked); GET /events?from=N&follow=1 answers the log's records
// as newline-delimited JSON (EventLine), for event handlers in any language
// (ReadEvents in Go, `actorlet journal events --follow --from N`).
//
// # Locking
//
// bbolt takes an exclusive flock on the file (shared for OpenReadOnly). Open
// waits Options.OpenTimeout for it, then fails with ErrLocked naming the
// holder's PID from /proc/locks when it can. flock locks belong to the open
// file, so a second Open in the same process conflicts too.
//
// # Secrets
//
// The journal cannot tell secret data from other data and does not try.
// Callers must strip it before appending: a PodAccepted carries the pod as
// received, which references Secrets by name but must never contain their
// contents (nor values derived from them, such as resolved environment
// variables). The file is mode 0600 in a 0700 directory, but it is not
// encrypted.
//
// # Caveats
//
//   - The file never shrinks below its high-water mark: deleted records and
//     pods free pages that bbolt reuses (there is no online compaction of
//     the file). The bound under steady churn is therefore the high-water
//     mark of the live pods' data plus the retention window's removed pods,
//     plus bbolt's slack (partly filled pages, the freelist, the file
//     growing by doubling): BenchmarkChurnSize (200 live pods, 10,000
//     add/remove/edit steps, removed pods kept 200 steps) ends at 2 MiB for
//     about 0.6 MiB of values, and the same after 30,000 steps. Removed pods
//     are deleted by the running node (node/agent compaction.go, DeleteAt)
//     once their retention has passed.
//   - The index holds every record's number in memory (see In-memory
//     index); snapshots that compact streams keep it small.
//   - One process owns a journal directory. Quarantine renames the file
//     after bbolt released it; a second process racing to open the same
//     directory at that moment is not guarded against.
//   - After a failed fsync, Linux may have dropped the dirty pages; bbolt
//     and the journal carry on (the failed batch is reported, later commits
//     proceed). A node that sees commit errors should treat the disk as
//     suspect.
package journal

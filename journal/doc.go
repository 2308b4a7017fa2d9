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
// commits it — one fsync for many pods — then answers each waiter. There is
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
// # File layout (schema version 2)
//
//	journal.db (bbolt)
//	├── meta                         bucket
//	│   ├── "schema"   → "2"         SchemaVersion, decimal ASCII
//	│   ├── "created"  → RFC 3339    UTC creation time (Options.Clock)
//	│   └── "migrated" → text        only in a file migrated from schema 1
//	├── log                          bucket, append-only (FillPercent 1.0)
//	│   ├── 00 00 00 00 00 00 00 01 → Envelope   key: record number, 8 bytes big-endian
//	│   ├── 00 00 00 00 00 00 00 02 → Envelope   (pod_uid and seq are in the record)
//	│   └── ...
//	└── snapshots                    bucket
//	    └── <pod UID> → Snapshot     at most one per pod
//
// The writer numbers records 1, 2, 3, ... in commit order: each commit adds
// its records at the end of the log, and the records of all pods are
// interleaved there. A pod's records are in seq order in the log. A pod
// exists in the journal if it has records or a snapshot. Its stream is the
// snapshot (if any) followed by its records with seq snapshot.seq+1, +2, ...
// (or 1, 2, ... without snapshot), without gaps. SaveSnapshot writes the
// snapshot and deletes the records it covers in one transaction, so no
// record with seq <= snapshot.seq remains; Delete removes all of the pod's
// records and its snapshot. Numbers of records deleted at the end of the log
// may be used again after a restart: record numbers only grow in commit
// order.
//
// Schema version 1 (the first layout: a bucket per pod under "pods", keyed by
// seq) is migrated by Open, in one transaction, before first use: the records
// move to the log unchanged, pod after pod. A version 1 file with a record
// that would not keep its pod and seq in the log (its key is not a seq, its
// header does not decode or names another pod or seq) is not migrated but
// quarantined (see Damaged files). OpenReadOnly refuses a version 1 file with
// ErrSchemaVersion. See migrate.go.
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
// Values are the protobuf binary encoding (proto3, deterministic) of
// actorlet.v1.Envelope and actorlet.v1.Snapshot from
// proto/actorlet/v1/events.proto, without framing. Every record carries its
// schema_version, its seq and its pod_uid; a log record's pod is the one its
// pod_uid names, and a snapshot's pod_uid must be its key. This build writes
// schema_version SchemaVersion (2) and reads 1 and 2 alike (the encoding did
// not change between them; migrated records keep their 1). events.proto only
// ever gains fields; a change that old code could misread would bump
// SchemaVersion. A file or record with a newer schema version is refused
// (ErrSchemaVersion) rather than misread.
//
// bbolt checksums only its meta pages, not data pages; damage inside a
// record value is found only if the record no longer decodes or no longer
// fits its pod's stream. There is no per-record checksum in schema version 2.
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
// A log record whose header does not decode (or whose key is not a record
// number) cannot be told apart from any pod's last event. It is a problem of
// the file (Problem.PodUID empty): Verify and LoadAll report it, and Load
// fails for every pod with a *CorruptError while the file holds it (nothing
// removes it; the file has to be replaced). A record whose header decodes
// but whose event does not is a problem of its pod only.
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
//   - The file never shrinks: deleted records and pods free pages that bbolt
//     reuses.
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

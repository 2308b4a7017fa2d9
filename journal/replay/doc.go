// Package replay re-folds the events a journal holds for each pod with the
// same fold the PodActor uses (lifecycle.Apply) and names every place where
// the journal disagrees with itself: a divergence. It reads only; it never
// repairs.
//
// # What is compared
//
// For each pod the fold starts from the empty state at seq 1, or, when the
// pod's earlier events were compacted, from its stored snapshot (the journal
// keeps at most one per pod and deletes the events it covers in the same
// transaction: Pod.From says which). Then:
//
//   - The stored snapshot against its own record: its state names the pod
//     (uid) and the snapshot's seq, every container record is stored under
//     its own name, and its pod_json decodes (lifecycle.FromSnapshot).
//   - Every event against the state it is folded into. Apply folds an event
//     only if it fits the state (a ContainerExited names the container ID
//     the state holds for that container, a SandboxCreated the sandbox
//     attempt it requested, ...) and otherwise leaves the state alone, which
//     its contract says happens only in a damaged journal. An event that
//     does not fit is a divergence naming the field it contradicts. This is
//     how an altered snapshot is found: the first later event that depends
//     on the altered field contradicts it.
//   - The folded state against the snapshot that would be taken of it (the
//     last snapshot): the state is stored as the PodActor stores it
//     (deterministic protobuf), restored as recovery restores it
//     (lifecycle.FromSnapshot), and both the states and the pod statuses
//     derived from them (lifecycle.Status) must be equal field by field.
//
// # What is not compared
//
// The journal does not record the statuses the node reported to the API
// server, so the derived status is compared with the status the restored
// state derives, not with a reported one. A stored snapshot's fields that no
// later event depends on (a restart count, say) cannot be checked: the
// events that produced them are no longer in the journal.
//
// # Damage
//
// A record that fails its checksum, does not decode, or breaks its pod's
// sequence is damage, not divergence: the pod is reported as damaged (from
// journal.CorruptError's problems) and not folded, and the other pods are
// replayed as usual. Problems of the file as a whole (a record whose pod
// cannot be told) are reported as damage without a pod.
package replay

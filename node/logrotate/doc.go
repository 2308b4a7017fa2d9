// Package logrotate rotates the log files of actorlet's running containers, as the kubelet's
// container log manager does.
//
// The runtime writes each container's output to the file named by ContainerStatus.LogPath
// (the "current log"). A [Manager] pass ([Manager.RotateOnce]) looks at every running
// container labelled io.actorlet.managed=true; when its current log has grown to
// [Policy.MaxSize] bytes or more, it rotates it:
//
//  1. cleans up leftovers of earlier, interrupted passes: temporary files (<log>.<ts>.tmp) and
//     uncompressed rotated files whose compressed copy (<log>.<ts>.gz) already exists;
//  2. removes the oldest rotated files so that, once this rotation adds one, at most
//     [Policy.MaxFiles] files exist counting the current log;
//  3. gzips every remaining uncompressed rotated file to <log>.<ts>.gz (written to
//     <log>.<ts>.tmp, synced, then renamed), so only the newest rotated file is ever left
//     uncompressed: a reader that had it open can finish reading it;
//  4. renames the current log to <log>.<ts>, ts being the clock's time formatted as
//     [TimestampFormat] ("20060102-150405", as the kubelet), and asks the runtime to reopen
//     the container's log (CRI ReopenContainerLog), which creates a new current log.
//
// Rotated files sort oldest first by name; [RotatedFiles] lists them for readers.
//
// Guarantees:
//   - Only running containers carrying io.actorlet.managed=true are touched: the runtime is
//     asked for those only, the listing is checked again, and the state once more in the
//     container's status the first time a pass meets the container (its log path is kept
//     while it stays listed, and asked again once it was not); files of exited containers
//     and of other tenants are left alone. A container that exits between a pass's listing
//     and its rotation has its log renamed back, as any failed reopen (below).
//   - If ReopenContainerLog fails the current log is renamed back, so the runtime keeps
//     writing to the file at LogPath and the next pass tries again. If the current log is
//     missing (a reopen failed after an earlier rename), the pass asks the runtime to reopen
//     it before anything else.
//   - A rotation never overwrites a file: when <log>.<ts> or <log>.<ts>.gz exists already
//     (two rotations within one second), the container is skipped until the next pass, before
//     any file is changed.
//   - Only files named <log>.<ts>, <log>.<ts>.gz and <log>.<ts>.tmp, ts in TimestampFormat,
//     are ever removed or compressed; other files next to the log are ignored.
//   - Passes are serialised: Run and direct RotateOnce calls never overlap. Within a pass,
//     at most [Policy.MaxWorkers] containers are handled at once.
//   - A failure on one container is logged and returned (joined with the others) and does not
//     stop the pass.
//
// # Caveats
//
// A rotation is not atomic: if actorlet stops between the rename of the current log and the
// reopen, the runtime writes to the rotated file until the next pass notices the missing
// current log and reopens it. Timestamps are in the clock's local time, as in the kubelet.
package logrotate

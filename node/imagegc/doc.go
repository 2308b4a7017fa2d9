// Package imagegc removes unused container images, as the kubelet's image
// garbage collection manager does, for actorlet.
//
// A [Manager] keeps, in memory, when each image ID was first seen and last
// used. An image is in use while any container the runtime lists (running or
// not, managed by actorlet or not) refers to it by ID, tag or digest. Each
// pass ([Manager.GarbageCollect]) first removes unused images idle for longer
// than [Policy.MaxAge] (when set), then measures the image filesystem and,
// when its usage is at or above [Policy.HighThresholdPercent], removes unused
// images, least recently used first, until usage is down to
// [Policy.LowThresholdPercent]. [Manager.Run] runs a pass every period.
//
// Guarantees:
//   - An image that is in use, pinned by the runtime (Image.Pinned) or named
//     as a sandbox image ([WithSandboxImages]) is never removed.
//   - An image seen for less than [Policy.MinAge] is never removed, so an
//     image being pulled for a pod that has no container yet survives.
//   - Idle time for MaxAge counts from the last use, or from the first sight
//     for an image never seen in use. Tracking is in memory only: after a
//     restart every image is new, so nothing is removed for age until MaxAge
//     has passed since the restart, and nothing for space until MinAge has.
//   - A failed removal is logged, reported as an error and an ImageGCFailed
//     event, and does not stop the pass: the next candidate is tried.
//   - Passes are serialised: Run and direct GarbageCollect calls never
//     overlap.
//
// # Caveats
//
// Usage is the image filesystem's UsedBytes (from CRI ImageFsInfo) over the
// capacity of its mountpoint (from statfs). Unlike the kubelet, which measures
// capacity minus available, data other than images on a shared filesystem does
// not count. Bytes freed are the images' reported sizes; layers shared with
// images that stay free less. Only the first image filesystem the runtime
// reports is measured.
package imagegc

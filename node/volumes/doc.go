// Package volumes sets up a pod's local volumes on the host, as the
// kubelet's volume manager does for the volume types that need no storage
// driver: emptyDir, hostPath, configMap, secret, downwardAPI and projected;
// and CSI ephemeral inline volumes (csi) through a Plugin registered in
// process under the volume's driver name (see Plugin for its guarantees).
// Any other type (persistentVolumeClaim, nfs, ephemeral, image, ...), and a
// csi volume whose driver has no Plugin, is refused with an error for which
// errors.Is(err, ErrUnsupported) is true.
//
// # Layout
//
// Under Options.RootDir, the kubelet's own layout:
//
//	<root>/pods/<podUID>/                                  0750, removed by TearDown
//	    volumes/<plugin>/<volumeName>/                     0750 parents; the volume's own directory:
//	        kubernetes.io~empty-dir/<name>                 0777; a tmpfs when medium is Memory, 1777 as the kernel makes it
//	        kubernetes.io~configmap/<name>                 0755, on disk
//	        kubernetes.io~secret/<name>                    0755, a tmpfs where the Mounter can mount one
//	        kubernetes.io~downward-api/<name>              0755, a tmpfs where the Mounter can mount one
//	        kubernetes.io~projected/<name>                 0755, a tmpfs where the Mounter can mount one
//	        kubernetes.io~csi/<name>/vol_data.json         0600, the inline volume's record (see Plugin)
//	        kubernetes.io~csi/<name>/mount                 0755, the plugin's directory, mounted by containers
//	    containers/<container>/<attempt>                   termination-message files (package actors)
//
// hostPath volumes are not under the root: their path is the host's own.
//
// # Files of configMap, secret, downwardAPI and projected volumes
//
// They are written as the kubelet's AtomicWriter writes them, so that a
// reader in a container never sees a half-updated volume:
//
//	<volume>/..2024_05_01_10_00_00.123456789/<key>   the data, one timestamped directory per version
//	<volume>/..data -> ..2024_05_01_10_00_00.123456789
//	<volume>/<key>  -> ..data/<key>                  one symlink per top-level path of the payload
//
// A new version is written into a fresh timestamped directory, then a
// ..data_tmp symlink to it is renamed over ..data (rename(2) is atomic),
// then the per-key symlinks are added or removed and the old directory is
// deleted. A payload equal to what is on disk (contents and modes) is not
// rewritten. Leftovers of a write interrupted by a crash (a ..data_tmp, a
// timestamped directory ..data does not point to) are removed by the next
// write.
//
// Modes are the volume's defaultMode (0644 when unset) or the item's mode,
// plus group read when the pod has an fsGroup (see below). The projected
// token's fsUser is not applied (files stay owned by the node's user).
//
// # fsGroup
//
// When the pod has spec.securityContext.fsGroup, its emptyDir, configMap,
// secret, downwardAPI and projected volumes get that group as the
// kubelet's SetVolumeOwnership gives it: every file and directory is
// chowned to the group, files get group read-write (emptyDir) or group
// read (the others) added to their mode, directories also group search and
// the setgid bit, so that what a container makes there inherits the group.
// A projected serviceAccountToken is then 0600 plus group read. An
// emptyDir is changed when it is made (a SetUp that finds its root already
// with the group and bits changes nothing, whatever fsGroupChangePolicy,
// as the kubelet changes a new emptyDir only); a data volume is changed at
// each new version, before it is published. A file that cannot be changed
// is logged and the volume used as it is, as the kubelet does. hostPath
// and csi volumes are not changed.
//
// # What the Manager guarantees
//
//   - SetUp is idempotent: calling it again for a set-up pod mounts nothing
//     twice and rewrites only changed contents. Calls for one pod UID are
//     serialized (SetUp, Refresh, TearDown); calls for different pods run
//     concurrently.
//   - SetUp tries every volume and reports every failure: the error joins
//     one *VolumeError per failed volume, whose message is the kubelet's
//     FailedMount message ("MountVolume.SetUp failed for volume ...").
//     Paths then holds the volumes that were set up.
//   - TearDown unmounts the pod's tmpfs mounts and removes its directory;
//     it refuses to remove anything across a mount point it could not
//     unmount, so it never deletes through a mount into other storage. It
//     can be called again after a crash half-way, and for a pod that has no
//     directory.
//   - Secret contents and tokens are never logged.
//
// # Caveats
//
//   - sizeLimit is enforced only for memory-backed emptyDirs (the tmpfs's
//     size); an emptyDir on disk can grow past it (the kubelet evicts such
//     pods; this package does not measure usage).
//   - A memory-backed emptyDir without sizeLimit gets the kernel's default
//     tmpfs size (half the RAM), not the pod's memory limit.
//   - Where the Mounter cannot mount a tmpfs (not root, no CAP_SYS_ADMIN),
//     secret, downwardAPI and projected volumes fall back to plain
//     directories on disk, with a logged warning; memory-backed emptyDirs
//     fail instead.
//   - emptyDir medium HugePages is not supported.
package volumes

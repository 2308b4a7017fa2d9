package volumes

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Plugin sets up and tears down the CSI ephemeral inline volumes
// (volumes[].csi) of one driver, in the node's own process: code of the
// user's that serves a volume type beside the built-in ones. It is
// registered under its driver name (Options.Plugins, agent.WithVolumePlugin's
// VolumePlugins); a pod's inline CSI volume whose driver has no plugin
// fails to mount with the kubelet's message naming the driver.
//
// # What the Manager guarantees a Plugin
//
//   - Calls for one pod are serialized (SetUp, Refresh, TearDown of all its
//     volumes); calls for different pods may run concurrently.
//   - Before SetUp, the Manager writes the volume's record (vol_data.json,
//     beside Dir: driver, attributes, pod; never secrets) to disk, and
//     after SetUp succeeded it marks the record set up. A volume marked set
//     up is not set up again: SetUp is called once per volume of a pod,
//     across restarts and kill -9 of actorlet, except after a SetUp that
//     failed, or whose success was not yet marked when actorlet was killed
//     (during the call or just after it): then it is called again for the
//     same volume, and must finish what a previous call left half-way or
//     accept what it completed (idempotent on the directory's contents).
//   - TearDown is called, when the pod is removed from the node (or found
//     orphaned after a crash), for every volume that has a record, whether
//     its SetUp succeeded, failed or never ran: it must accept a volume
//     that is not, or only partly, set up. After it succeeds the record is
//     deleted, then the pod's directory; if it fails (or actorlet crashes
//     before the record is deleted) it is called again later (the next
//     sync period), and nothing of the pod's directory is removed meanwhile.
//   - Dir exists (mode 0755) when SetUp is called; what is in it when
//     TearDown returns is removed by the Manager, without crossing into
//     another file system: a plugin that mounted something at Dir must
//     unmount it in TearDown.
//   - ctx carries no deadline of the node's (the node waits for SetUp
//     before the pod's sandbox, for TearDown before the pod is gone): a
//     plugin bounds its own slow calls and returns an error instead.
//   - The volume's FailedMount event and retries are the node's: an error
//     of SetUp fails the pod's sandbox (or container) creation with reason
//     FailedMount and the message "MountVolume.SetUp failed for volume
//     <name> : <error>"; the node retries it with back-off.
type Plugin interface {
	// SetUp makes the volume's files ready in v.Dir.
	SetUp(ctx context.Context, v *InlineVolume) error
	// TearDown releases what SetUp made (the Manager removes v.Dir after).
	TearDown(ctx context.Context, v *InlineVolume) error
}

// Refresher is a Plugin that also refreshes the volumes it set up: the
// Manager calls Refresh every volume refresh period (agent.WithVolumePlugin's
// VolumeRefreshPeriod, --sync-frequency) for each volume of a running pod
// whose SetUp succeeded, as it rewrites configMap and secret volumes. An
// error is logged and the volume keeps its files.
type Refresher interface {
	Refresh(ctx context.Context, v *InlineVolume) error
}

// InlineVolume is one CSI ephemeral inline volume of a pod, as a Plugin
// sees it: the fields of the pod's volumes[].csi, passed through as the
// kubelet passes them to a CSI driver's NodePublishVolume, and the pod's
// identity (the kubelet's podInfoOnMount attributes).
type InlineVolume struct {
	// Driver is volumes[].csi.driver.
	Driver string
	// VolumeName is the volume's name in the pod spec.
	VolumeName string
	// Attributes are volumes[].csi.volumeAttributes (never nil).
	Attributes map[string]string
	// ReadOnly is volumes[].csi.readOnly: the containers mount it read-only.
	ReadOnly bool
	// FSType is volumes[].csi.fsType ("" when unset).
	FSType string
	// Secrets are the data of the Secret volumes[].csi.nodePublishSecretRef
	// names, read from the API server for SetUp and Refresh; nil without a
	// reference, and always nil for TearDown (as NodeUnpublishVolume gets
	// none). The Manager never writes them to disk or logs them.
	Secrets map[string]string

	PodNamespace       string
	PodName            string
	PodUID             types.UID
	ServiceAccountName string

	// Dir is the volume's directory on the host, which the pod's
	// containers mount: <root>/pods/<podUID>/volumes/kubernetes.io~csi/<name>/mount.
	Dir string
}

// validatePlugins checks the registered drivers' names as the API server
// checks volumes[].csi.driver (a DNS subdomain of at most 63 characters).
func validatePlugins(plugins map[string]Plugin) error {
	for name, p := range plugins {
		if p == nil {
			return fmt.Errorf("volumes: plugin for driver %q is nil", name)
		}
		if len(name) > 63 {
			return fmt.Errorf("volumes: driver name %q: must be no more than 63 characters", name)
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return fmt.Errorf("volumes: driver name %q: %s", name, errs[0])
		}
	}
	return nil
}

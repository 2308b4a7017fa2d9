// Package kubeletconfig is the kubelet v1.37's configuration as actorlet reads
// it: every flag of the kubelet ([AddFlags]: node flags, the flags that set
// KubeletConfiguration fields, global flags), the KubeletConfiguration file
// (kubelet.config.k8s.io/v1beta1, --config, decoded as the kubelet decodes it:
// [Load]) and its drop-in directory (--config-dir: [MergeDropIns]), the
// kubelet's defaults ([SetDefaults]) and validation rules ([Validate],
// [ValidateNodeFlags]), and its feature gates ([GatesFor]).
//
// [Parse] applies the kubelet's precedence: defaults, then the file and
// drop-ins, then the flags given on the command line. Flags and file end in
// one KubeletConfiguration that is validated once.
//
// actorlet acts on a subset of the flags ([ImplementedFlags]) and fields
// ([SupportedFields]); the others are accepted and listed by [Ignored] for
// one warning at start. A [Profile] chooses between the kubelet's defaults
// and `actorlet run`'s where they differ.
package kubeletconfig

package agent

import (
	"github.com/actorlet/actorlet/actors"
)

// PodDeps resolves opts as New does and returns the parts a pod's shell
// drives, built the way Run builds them for its PodActors: the runtime and
// its lister, the clock, the core's parameters (with the lifecycle hooks'
// stages), the pod-spec conversion, the host IP, the runtime name, the
// admission and lifecycle hooks, the volumes, probes and hooks given by
// options, and what pods read from the cluster. What belongs to a running
// node is left to the caller: the journal, the status and event sinks, the
// metrics, and the built-in volume manager and probers (Run makes those;
// here a part not given by an option stays nil, which a shell skips).
//
// The deterministic simulation (package sim) builds its nodes' parts this
// way and drives them with its own shell instead of actors.
func PodDeps(opts ...Option) (*actors.Deps, error) {
	s, err := resolve(opts)
	if err != nil {
		return nil, err
	}
	return s.podDeps(), nil
}

// podDeps are the pod parts opts gave (see PodDeps).
func (s *settings) podDeps() *actors.Deps {
	d := &actors.Deps{
		Runtime: s.runtime, Lister: actors.CRILister{Client: s.runtime},
		Clock: s.clock, Logger: s.logger.Named("pod"), Lifecycle: s.lifecycle, PodConfig: s.podConfig,
		RuntimeName: s.runtimeName, HostIP: s.hostIP, TracerProvider: s.tracerProvider,
		EnvSource: s.envSource, Services: s.services, Allocatable: s.allocatable,
		LifecycleHooks: s.lifecycleHooks, Probers: s.probers, Hooks: s.hooks,
	}
	if s.volumes != nil {
		d.Volumes = s.volumes // an interface holding nil would not be nil
	}
	if len(s.admitters) > 0 {
		d.Admission = actors.JoinAdmitters(s.admitters[0], s.admitters[1:]...)
	}
	return d
}

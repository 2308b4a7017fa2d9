package actorletv1

// LifecycleInput marks the messages a pod's pure core reacts to (the closed
// set lifecycle.Input names): what the pod's source wants, what the runtime
// shows, what an effect or a probe found, an eviction, the passing of time.
type LifecycleInput interface{ isLifecycleInput() }

func (*PodDesired) isLifecycleInput()      {}
func (*PodUndesired) isLifecycleInput()    {}
func (*RuntimeObserved) isLifecycleInput() {}
func (*EffectResult) isLifecycleInput()    {}
func (*ProbeResult) isLifecycleInput()     {}
func (*PodEvict) isLifecycleInput()        {}
func (*Tick) isLifecycleInput()            {}

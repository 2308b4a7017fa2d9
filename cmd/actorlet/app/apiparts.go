package app

import (
	"context"
	"fmt"
	"sync"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/node/admit"
	"github.com/actorlet/actorlet/node/agent"
	"github.com/actorlet/actorlet/node/apisource"
	"github.com/actorlet/actorlet/node/eventhub"
	"github.com/actorlet/actorlet/node/podevents"
	"github.com/actorlet/actorlet/node/podrefs"
	"github.com/actorlet/actorlet/node/statuswriter"
	"github.com/actorlet/actorlet/podspec"
)

// apiParts are the pieces that make a node a member of a cluster: pods
// from the API server, their statuses and mirror pods, events, admission.
type apiParts struct {
	source    agent.PodSource
	writer    *statuswriter.Writer
	events    actors.EventSink
	recorder  record.EventRecorder
	admission actors.Admitter
	envSource podspec.EnvSource
	services  *podrefs.Services
	tokens    *podrefs.Tokens
	stop      func()
}

// sharedInformers are the informers of cluster-wide objects that the nodes
// of one process (actorlet fleet) share: every bound pod, dispatched by
// node name, the Services, and the Nodes (each node's periodic check of its
// own: nodeactor.Config.Nodes). They read as the process's own identity;
// each node's writes go through its own client.
type sharedInformers struct {
	pods     *apisource.Shared
	services *podrefs.Services
	nodes    corelisters.NodeLister
	factory  informers.SharedInformerFactory // the Nodes'
}

// newSharedInformers builds them; start runs them until ctx ends, stop
// then waits for them.
func newSharedInformers(kube kubernetes.Interface) (*sharedInformers, error) {
	pods, err := apisource.NewShared(kube, 0)
	if err != nil {
		return nil, err
	}
	// The Nodes without their managed fields, which no node reads.
	f := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithTransform(func(obj any) (any, error) {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetManagedFields(nil)
		}
		return obj, nil
	}))
	nodes := f.Core().V1().Nodes()
	nodes.Informer() // registered with f, so that f.Start runs it
	return &sharedInformers{pods: pods, services: podrefs.NewServices(kube), nodes: nodes.Lister(), factory: f}, nil
}

func (s *sharedInformers) start(ctx context.Context) {
	s.pods.Start(ctx)
	s.services.Start(ctx)
	s.factory.Start(ctx.Done())
}

func (s *sharedInformers) stop() {
	s.pods.Shutdown()
	s.services.Shutdown()
	s.factory.Shutdown()
}

// newAPIParts builds them for the node nodeName, whose API clients kube
// and eventKube are: with shared (a fleet's), its pods and the Services
// come from the shared informers, else from informers of its own; with
// hub (a fleet's), its events go through the fleet's broadcaster, else
// through one of its own (either writes them with eventKube). The writer
// and the event sink run until stop.
func newAPIParts(kube, eventKube kubernetes.Interface, nodeName string, allocatable corev1.ResourceList, shared *sharedInformers, hub *eventhub.Hub, log *zap.Logger) (*apiParts, error) {
	var w *statuswriter.Writer
	srcOpts := apisource.Options{Client: kube, NodeName: nodeName, Logger: log.Named("apisource"),
		OnMirror: func(p *corev1.Pod) { w.MirrorChanged(p) }}
	var src *apisource.Source
	var err error
	if shared != nil {
		src, err = shared.pods.Source(srcOpts)
	} else {
		src, err = apisource.New(srcOpts)
	}
	if err != nil {
		return nil, err
	}
	w, err = statuswriter.New(statusWriterOptions(kube, src.Lister(), nodeName, shared != nil, log))
	if err != nil {
		return nil, fmt.Errorf("status writer: %w", err)
	}
	ownHub := hub == nil
	if ownHub {
		if hub, err = eventhub.New(eventhub.Options{Scheme: scheme.Scheme, Logger: log.Named("events")}); err != nil {
			return nil, err
		}
	}
	rec, removeEvents, err := hub.Add(nodeName, "kubelet", &typedcorev1.EventSinkImpl{Interface: eventKube.CoreV1().Events("")}, log.Named("events"))
	if err != nil {
		if ownHub {
			hub.Shutdown()
		}
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	// The Services for the containers' service-link variables, as the
	// kubelet's informer (headless ones left out).
	services, ownServices := (*podrefs.Services)(nil), shared == nil
	if ownServices {
		services = podrefs.NewServices(kube)
		services.Start(ctx)
	} else {
		services = shared.services
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.Run(ctx)
	}()
	return &apiParts{
		source: agent.PodSource{Name: apisource.SourceName, Run: src.Run},
		writer: w, events: podevents.New(rec), recorder: rec,
		admission: admit.Resources{Allocatable: allocatable},
		envSource: podrefs.New(kube),
		services:  services,
		tokens:    podrefs.NewTokens(kube),
		stop: func() {
			cancel()
			wg.Wait()
			if ownServices {
				services.Shutdown()
			}
			removeEvents()
			if ownHub {
				hub.Shutdown()
			}
		},
	}, nil
}

// statusWriterOptions are the options of a node's status writer: a
// fleet's node writes with one worker, as the kubelet's status manager
// (its one goroutine per node), not statuswriter's default 4 that wait
// idle in every node of the fleet.
func statusWriterOptions(kube kubernetes.Interface, pods corelisters.PodLister, nodeName string, fleet bool, log *zap.Logger) statuswriter.Options {
	o := statuswriter.Options{Client: kube, Pods: pods, NodeName: nodeName, Logger: log.Named("status")}
	if fleet {
		o.Workers = 1
	}
	return o
}

// options are the agent's options of these parts.
func (p *apiParts) options() []agent.Option {
	return []agent.Option{agent.WithSource(p.source), agent.WithStatusSink(p.writer), agent.WithEventSink(p.events),
		agent.WithEnvSource(p.envSource), agent.WithTokens(p.tokens), agent.WithServices(p.services),
		agent.WithAdmitHandler(p.admission)}
}

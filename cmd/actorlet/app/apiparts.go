package app

import (
	"context"
	"fmt"
	"sync"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/actorlet/actorlet/actors"
	"github.com/actorlet/actorlet/node/admit"
	"github.com/actorlet/actorlet/node/agent"
	"github.com/actorlet/actorlet/node/apisource"
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

// newAPIParts builds them; start runs the writer and the event sink until
// stop.
func newAPIParts(kube, eventKube kubernetes.Interface, nodeName string, allocatable corev1.ResourceList, log *zap.Logger) (*apiParts, error) {
	var w *statuswriter.Writer
	src, err := apisource.New(apisource.Options{Client: kube, NodeName: nodeName, Logger: log.Named("apisource"),
		OnMirror: func(p *corev1.Pod) { w.MirrorChanged(p) }})
	if err != nil {
		return nil, err
	}
	w, err = statuswriter.New(statuswriter.Options{Client: kube, Pods: src.Lister(), NodeName: nodeName, Logger: log.Named("status")})
	if err != nil {
		return nil, fmt.Errorf("status writer: %w", err)
	}
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: eventKube.CoreV1().Events("")})
	rec := b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: nodeName})
	ctx, cancel := context.WithCancel(context.Background())
	// The Services for the containers' service-link variables, as the
	// kubelet's informer (headless ones left out).
	services := podrefs.NewServices(kube)
	services.Start(ctx)
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
			services.Shutdown()
			b.Shutdown()
		},
	}, nil
}

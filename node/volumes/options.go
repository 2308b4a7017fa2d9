package volumes

import (
	"context"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Source gives the ConfigMaps and Secrets that volumes project (the same
// two methods as podspec.EnvSource, so one implementation serves both). An
// object that does not exist is an error for which
// k8s.io/apimachinery/pkg/api/errors.IsNotFound is true; any other error
// is a failure to read it. It must be safe for concurrent use.
type Source interface {
	ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// TokenRequest asks for a service account token bound to a pod, as a
// projected serviceAccountToken source needs (the API's TokenRequest).
type TokenRequest struct {
	Namespace          string
	ServiceAccountName string
	// Audience is the token's audience; "" is the API server's default.
	Audience          string
	ExpirationSeconds int64
	// PodName and PodUID are the pod the token is bound to.
	PodName string
	PodUID  types.UID
}

// Token is a service account token and when it expires.
type Token struct {
	Value string
	// Expires is when the token expires; zero: ExpirationSeconds after it
	// was requested.
	Expires time.Time
}

// TokenRequester requests service account tokens (with client-go:
// CoreV1().ServiceAccounts(ns).CreateToken with a BoundObjectRef to the
// pod). It must be safe for concurrent use. The Manager caches tokens and
// asks again once 80% of a token's lifetime has passed (or 24 hours), as
// the kubelet's token manager does.
type TokenRequester interface {
	RequestToken(ctx context.Context, req TokenRequest) (Token, error)
}

// Options configure a Manager.
type Options struct {
	// RootDir is the kubelet's root directory (--root-dir, e.g.
	// /var/lib/kubelet); pods go under <RootDir>/pods. Required.
	RootDir string
	// Source reads ConfigMaps and Secrets. Nil is a node without an API
	// server: a configMap or secret volume (or projection) then fails with
	// ErrUnavailable unless it is optional, in which case it is empty.
	Source Source
	// Tokens requests service account tokens. Nil: a projected
	// serviceAccountToken source fails with ErrUnavailable.
	Tokens TokenRequester
	// Plugins serve CSI ephemeral inline volumes (volumes[].csi) in
	// process, by driver name (see Plugin). A csi volume whose driver is
	// not here fails to mount, naming the driver.
	Plugins map[string]Plugin
	// Mounter mounts and unmounts tmpfs. Nil is SystemMounter, the host's
	// mount(2).
	Mounter Mounter
	// Allocatable is the node's allocatable resources: a downward API
	// resourceFieldRef to a cpu, memory or ephemeral-storage limit the
	// container does not set reads it, as the kubelet does (nil: 0).
	Allocatable corev1.ResourceList
	// Logger; nil logs nothing.
	Logger *zap.Logger
	// Observer, if set, is told how each mount and unmount went
	// (metrics).
	Observer OperationObserver
	// Clock names the data directories and ages tokens; nil is the real
	// clock.
	Clock clock.PassiveClock
}

package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/actorlet/actorlet/node/certs"
)

// nodeIdentity is what a fleet node acts as: system:node:<name> in
// system:nodes, as a kubelet's client certificate says.
func nodeIdentity(name string) transport.ImpersonationConfig {
	return transport.ImpersonationConfig{UserName: "system:node:" + name, Groups: []string{"system:nodes", "system:authenticated"}}
}

// fleetClients are the API clients of a fleet: one HTTP client (one
// connection pool, HTTP/2) of the kubeconfig's identity, which reads the
// shared informers; each node's clients wrap its transport to impersonate
// the node. The nodes' kube and events clients share one bound on their
// requests in flight (inflightLimit); their heartbeat clients do not wait
// for it: a node has at most two heartbeat requests in flight (its
// Lease's and its Node status', each from its own actor), and Lease
// renewals waiting behind pods ran into their 10 s timeout.
type fleetClients struct {
	base   *rest.Config
	http   *http.Client
	shared kubernetes.Interface
	// pods: the transport of the nodes' kube and events clients.
	pods http.RoundTripper
	// refused stands for the API groups a node does not use in each
	// node's clients (nodeClientset): its requests fail without leaving
	// the process.
	refused kubernetes.Interface
}

// defaultFleetInflight is --api-max-inflight's default: a kube-apiserver's
// default --max-requests-inflight (400). An API server refuses what is
// over its own bounds (429), and client-go retries it.
const defaultFleetInflight = 400

// newFleetClients makes the clients of kubeconfig's identity; inflight
// bounds the requests in flight of the nodes' kube and events clients.
func newFleetClients(kubeconfig string, inflight int) (*fleetClients, error) {
	base, err := certs.LoadKubeconfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	if base.Impersonate.UserName != "" {
		return nil, fmt.Errorf("--kubeconfig %s impersonates %q already; the fleet impersonates each node itself", kubeconfig, base.Impersonate.UserName)
	}
	base.UserAgent = "actorlet-fleet/" + Version
	base.QPS, base.Burst = 50, 100
	hc, err := rest.HTTPClientFor(base)
	if err != nil {
		return nil, fmt.Errorf("API client: %w", err)
	}
	shared, err := kubernetes.NewForConfigAndClient(base, hc)
	if err != nil {
		return nil, fmt.Errorf("API client: %w", err)
	}
	refused, err := rest.RESTClientForConfigAndClient(&rest.Config{Host: base.Host, APIPath: "/",
		ContentConfig: rest.ContentConfig{GroupVersion: &schema.GroupVersion{Version: "v1"}, NegotiatedSerializer: scheme.Codecs.WithoutConversion()}},
		&http.Client{Transport: refuseGroup{}})
	if err != nil {
		return nil, fmt.Errorf("API client: %w", err)
	}
	return &fleetClients{base: base, http: hc, shared: shared, refused: kubernetes.New(refused),
		pods: newInflightLimit(inflight, hc.Transport)}, nil
}

// errGroupNotServed is the error of a fleet node's request to an API group
// its clients do not hold (nodeClientset).
var errGroupNotServed = errors.New("a fleet node's API client holds only core/v1, coordination.k8s.io/v1 and authentication.k8s.io/v1")

// refuseGroup is the transport of the groups a node's clients leave out.
type refuseGroup struct{}

func (refuseGroup) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("%s %s: %w", r.Method, r.URL.Path, errGroupNotServed)
}

// apiGroups are the API groups of a nodeClientset.
type apiGroups uint8

const (
	groupCore apiGroups = 1 << iota
	groupCoordination
	groupAuthentication
)

// nodeClientset is a fleet node's kubernetes.Interface with REST clients
// of the groups the node uses only, not client-go's ~50 of a Clientset
// (thousands of nodes in one process each held three); the others are
// the fleet's refused ones. Its groups share one rate limiter, as a
// Clientset's do.
type nodeClientset struct {
	kubernetes.Interface
	core           corev1client.CoreV1Interface
	coordination   coordinationv1client.CoordinationV1Interface
	authentication authenticationv1client.AuthenticationV1Interface
}

func (c *nodeClientset) CoreV1() corev1client.CoreV1Interface { return c.core }
func (c *nodeClientset) CoordinationV1() coordinationv1client.CoordinationV1Interface {
	return c.coordination
}
func (c *nodeClientset) AuthenticationV1() authenticationv1client.AuthenticationV1Interface {
	return c.authentication
}

// newNodeClientset makes the REST clients of groups with cfg over hc.
func newNodeClientset(cfg *rest.Config, hc *http.Client, groups apiGroups, refused kubernetes.Interface) (*nodeClientset, error) {
	cfg = rest.CopyConfig(cfg)
	// As kubernetes.NewForConfigAndClient: one limiter for all groups.
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		if cfg.Burst <= 0 {
			return nil, fmt.Errorf("API client: QPS %v needs a burst above 0", cfg.QPS)
		}
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	c := &nodeClientset{Interface: refused, core: refused.CoreV1(), coordination: refused.CoordinationV1(),
		authentication: refused.AuthenticationV1()}
	var err error
	if groups&groupCore != 0 {
		if c.core, err = corev1client.NewForConfigAndClient(cfg, hc); err != nil {
			return nil, err
		}
	}
	if groups&groupCoordination != 0 {
		if c.coordination, err = coordinationv1client.NewForConfigAndClient(cfg, hc); err != nil {
			return nil, err
		}
	}
	if groups&groupAuthentication != 0 {
		if c.authentication, err = authenticationv1client.NewForConfigAndClient(cfg, hc); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// nodeClients are a fleet node's API clients, all acting as
// system:node:<name> over the fleet's one connection pool, each with its
// own rate limits as actorlet run's: kube (kubeAPIQPS, kubeAPIBurst; pods,
// their ConfigMaps, Secrets and tokens, the SelfSubjectReview), events
// (eventRecordQPS, eventBurst) and heartbeat (the Node's status and Lease:
// none, heartbeatConfig).
type nodeClients struct {
	kube, events, heartbeat kubernetes.Interface
}

// forNode are the clients of the node nc.
func (c *fleetClients) forNode(nc *nodeConfig) (nodeClients, error) {
	hc := &http.Client{Transport: transport.NewImpersonatingRoundTripper(nodeIdentity(nc.nodeName), c.pods), Timeout: c.http.Timeout}
	cfg := rest.CopyConfig(c.base)
	apiLimits(cfg, nc.kc)
	var out nodeClients
	var err error
	if out.kube, err = newNodeClientset(cfg, hc, groupCore|groupCoordination|groupAuthentication, c.refused); err != nil {
		return nodeClients{}, err
	}
	if out.events, err = newNodeClientset(eventConfig(cfg, nc.kc), hc, groupCore, c.refused); err != nil {
		return nodeClients{}, err
	}
	hb := heartbeatConfig(cfg, nc.kc)
	hbRT := transport.NewImpersonatingRoundTripper(nodeIdentity(nc.nodeName), c.http.Transport)
	if out.heartbeat, err = newNodeClientset(hb, &http.Client{Transport: hbRT, Timeout: hb.Timeout}, groupCore|groupCoordination, c.refused); err != nil {
		return nodeClients{}, err
	}
	return out, nil
}

// checkIdentity asks the API server who the node's client is
// (SelfSubjectReview): system:node:<name> in system:nodes, or the
// kubeconfig's identity may not impersonate nodes and the node would not
// be one.
func checkIdentity(ctx context.Context, kube kubernetes.Interface, name string) error {
	want := nodeIdentity(name)
	r, err := kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("acting as %s (the kubeconfig's identity must be allowed to impersonate nodes): %w", want.UserName, err)
	}
	u := r.Status.UserInfo
	if u.Username != want.UserName || !slices.Contains(u.Groups, "system:nodes") {
		return fmt.Errorf("the API server sees the node as %q in %v, want %s in system:nodes", u.Username, u.Groups, want.UserName)
	}
	return nil
}

package podspec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServiceLister reads the cluster's Services for the service-link
// environment variables. It must be safe for concurrent use and answer
// from a cache (it is asked at every container creation).
type ServiceLister interface {
	// Services returns the Services of every namespace, or
	// ErrServicesNotSynced before they have been read once.
	Services(ctx context.Context) ([]*corev1.Service, error)
}

// ErrServicesNotSynced is a ServiceLister's error before its first list: a
// container of an API pod waits for it (as the kubelet waits), so that no
// container starts without KUBERNETES_SERVICE_HOST after a restart.
var ErrServicesNotSynced = errors.New("services have not yet been read at least once, cannot construct envvars")

// masterServices are the Services of the default namespace every pod gets
// the variables of, whatever its enableServiceLinks.
var masterServices = map[string]bool{"kubernetes": true}

// serviceEnv is the kubelet's service-link environment of a pod
// (pkg/kubelet/kubelet_pods.go getServiceEnvVarMap and
// pkg/kubelet/envvars): for each Service with a cluster IP in the pod's
// namespace when enableServiceLinks is not false, and for the default
// namespace's "kubernetes" always, <NAME>_SERVICE_HOST, <NAME>_SERVICE_PORT
// (the first port), <NAME>_SERVICE_PORT_<PORTNAME> for each named port, and
// the Docker link variables <NAME>_PORT and <NAME>_PORT_<port>_<PROTO>
// (with _PROTO, _PORT and _ADDR). Nil lister: none, as a kubelet without an
// API server. A static pod does not wait for the first list.
func serviceEnv(ctx context.Context, pod *corev1.Pod, l ServiceLister) (map[string]string, error) {
	m := map[string]string{}
	if l == nil {
		return m, nil
	}
	services, err := l.Services(ctx)
	if errors.Is(err, ErrServicesNotSynced) && isStaticPod(pod) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list services for the service-link variables: %w", err)
	}
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	chosen := map[string]*corev1.Service{}
	for _, s := range services {
		if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone || len(s.Spec.Ports) == 0 {
			continue
		}
		switch {
		case s.Namespace == metav1.NamespaceDefault && masterServices[s.Name]:
			if _, ok := chosen[s.Name]; !ok {
				chosen[s.Name] = s
			}
		case s.Namespace == pod.Namespace && links:
			chosen[s.Name] = s
		}
	}
	names := make([]string, 0, len(chosen))
	for n := range chosen {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		serviceVars(chosen[n], m)
	}
	return m, nil
}

// serviceVars adds one Service's variables to m.
func serviceVars(s *corev1.Service, m map[string]string) {
	prefix := envVarName(s.Name)
	ip := s.Spec.ClusterIP
	m[prefix+"_SERVICE_HOST"] = ip
	m[prefix+"_SERVICE_PORT"] = strconv.Itoa(int(s.Spec.Ports[0].Port))
	for _, p := range s.Spec.Ports {
		if p.Name != "" {
			m[prefix+"_SERVICE_PORT_"+envVarName(p.Name)] = strconv.Itoa(int(p.Port))
		}
	}
	for i, p := range s.Spec.Ports {
		proto := string(p.Protocol)
		if proto == "" {
			proto = string(corev1.ProtocolTCP)
		}
		url := strings.ToLower(proto) + "://" + net.JoinHostPort(ip, strconv.Itoa(int(p.Port)))
		if i == 0 {
			m[prefix+"_PORT"] = url
		}
		pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, p.Port, strings.ToUpper(proto))
		m[pp] = url
		m[pp+"_PROTO"] = strings.ToLower(proto)
		m[pp+"_PORT"] = strconv.Itoa(int(p.Port))
		m[pp+"_ADDR"] = ip
	}
}

// envVarName is a Service or port name as a variable name: upper case,
// '-' as '_'.
func envVarName(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }

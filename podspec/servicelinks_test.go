package podspec

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeServices is a ServiceLister; synced false answers ErrServicesNotSynced.
type fakeServices struct {
	synced bool
	list   []*corev1.Service
}

func (f fakeServices) Services(context.Context) ([]*corev1.Service, error) {
	if !f.synced {
		return nil, ErrServicesNotSynced
	}
	return f.list, nil
}

func svc(ns, name, ip string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: ports}}
}

func TestServiceLinks(t *testing.T) {
	cluster := fakeServices{synced: true, list: []*corev1.Service{
		svc("default", "kubernetes", "10.0.0.1", corev1.ServicePort{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}),
		svc("app", "redis-master", "10.0.0.11", corev1.ServicePort{Port: 6379}),
		svc("app", "dns", "fd00::a", corev1.ServicePort{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
			corev1.ServicePort{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP}),
		svc("app", "headless", corev1.ClusterIPNone, corev1.ServicePort{Port: 80}),
		svc("other", "elsewhere", "10.0.0.12", corev1.ServicePort{Port: 80}),
	}}
	kubernetes := map[string]string{
		"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443", "KUBERNETES_SERVICE_PORT_HTTPS": "443",
		"KUBERNETES_PORT": "tcp://10.0.0.1:443", "KUBERNETES_PORT_443_TCP": "tcp://10.0.0.1:443",
		"KUBERNETES_PORT_443_TCP_PROTO": "tcp", "KUBERNETES_PORT_443_TCP_PORT": "443", "KUBERNETES_PORT_443_TCP_ADDR": "10.0.0.1",
	}
	app := map[string]string{
		"REDIS_MASTER_SERVICE_HOST": "10.0.0.11", "REDIS_MASTER_SERVICE_PORT": "6379",
		"REDIS_MASTER_PORT": "tcp://10.0.0.11:6379", "REDIS_MASTER_PORT_6379_TCP": "tcp://10.0.0.11:6379",
		"REDIS_MASTER_PORT_6379_TCP_PROTO": "tcp", "REDIS_MASTER_PORT_6379_TCP_PORT": "6379", "REDIS_MASTER_PORT_6379_TCP_ADDR": "10.0.0.11",
		"DNS_SERVICE_HOST": "fd00::a", "DNS_SERVICE_PORT": "53", "DNS_SERVICE_PORT_DNS": "53", "DNS_SERVICE_PORT_DNS_TCP": "53",
		"DNS_PORT": "udp://[fd00::a]:53", "DNS_PORT_53_UDP": "udp://[fd00::a]:53", "DNS_PORT_53_UDP_PROTO": "udp",
		"DNS_PORT_53_UDP_PORT": "53", "DNS_PORT_53_UDP_ADDR": "fd00::a", "DNS_PORT_53_TCP": "tcp://[fd00::a]:53",
		"DNS_PORT_53_TCP_PROTO": "tcp", "DNS_PORT_53_TCP_PORT": "53", "DNS_PORT_53_TCP_ADDR": "fd00::a",
	}
	union := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	pod := func(links *bool, source string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "web"},
			Spec: corev1.PodSpec{EnableServiceLinks: links, Containers: []corev1.Container{{Name: "app"}}}}
		if source != "" {
			p.Annotations = map[string]string{annotationConfigSource: source}
		}
		return p
	}
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		lister  ServiceLister
		want    map[string]string
		wantErr error
	}{
		{"links on by default: the namespace's and kubernetes", pod(nil, ""), cluster, union(kubernetes, app), nil},
		{"links off: kubernetes only", pod(ptr(false), ""), cluster, kubernetes, nil},
		{"no API server", pod(nil, ""), nil, map[string]string{}, nil},
		{"not read yet: an API pod waits", pod(nil, "api"), fakeServices{}, nil, ErrServicesNotSynced},
		{"not read yet: a static pod does not", pod(nil, "file"), fakeServices{}, map[string]string{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, err := ContainerEnv(context.Background(), tc.pod, &tc.pod.Spec.Containers[0], EnvInputs{Services: tc.lister})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				return
			}
			got := env.Map()
			if len(got) != len(tc.want) {
				t.Errorf("%d variables, want %d: %v", len(got), len(tc.want), got)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}

	// The container's own variables win, and may refer to the links.
	p := pod(nil, "")
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "REDIS_MASTER_SERVICE_HOST", Value: "mine"},
		{Name: "REDIS_URL", Value: "redis://$(REDIS_MASTER_SERVICE_HOST):$(REDIS_MASTER_SERVICE_PORT)"}}
	env, err := ContainerEnv(context.Background(), p, &p.Spec.Containers[0], EnvInputs{Services: cluster})
	if err != nil {
		t.Fatal(err)
	}
	m := env.Map()
	if m["REDIS_MASTER_SERVICE_HOST"] != "mine" || m["REDIS_URL"] != "redis://mine:6379" {
		t.Errorf("own variables: host %q url %q", m["REDIS_MASTER_SERVICE_HOST"], m["REDIS_URL"])
	}
	if env.Vars[0].Name != "REDIS_MASTER_SERVICE_HOST" || env.Vars[1].Name != "REDIS_URL" {
		t.Errorf("the container's variables come first: %v", env.Vars[:2])
	}
}

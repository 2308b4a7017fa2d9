package podrefs

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/actorlet/actorlet/podspec"
)

func TestServicesFromTheInformer(t *testing.T) {
	client := fake.NewClientset(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1", Ports: []corev1.ServicePort{{Port: 443}}}})
	s := NewServices(client)
	if _, err := s.Services(context.Background()); !errors.Is(err, podspec.ErrServicesNotSynced) {
		t.Fatalf("before Start: %v, want ErrServicesNotSynced", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.Start(ctx)
	defer func() {
		cancel()
		s.Shutdown()
	}()
	wait, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if !cache.WaitForCacheSync(wait.Done(), s.synced) {
		t.Fatal("the informer never synced")
	}
	list, err := s.Services(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "kubernetes" {
		t.Fatalf("services %v, %v", list, err)
	}
}

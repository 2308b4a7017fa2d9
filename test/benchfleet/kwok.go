package main

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// kwokAnnotation marks the Nodes KWOK manages (its
// --manage-nodes-with-annotation-selector).
const kwokAnnotation = "kwok.x-k8s.io/node"

// kwokArgs are KWOK's flags: the fast node, Lease and pod stages of
// stagesPath, the Nodes with kwokAnnotation only, Leases of 40 s as the
// kubelet's, pod IPs from a /16 (its default /24 holds 254).
func kwokArgs(kubeconfig, stagesPath, serverAddress string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--config=" + stagesPath,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokAnnotation + "=fake",
		"--node-lease-duration-seconds=40",
		"--cidr=10.128.0.0/16",
		"--node-ip=127.0.0.1",
		"--server-address=" + serverAddress,
	}
}

// kwokNode is a Node for KWOK to play: the fleet's label and taint, and the
// capacity of the fleet's nodes (KWOK keeps the status it is given).
func kwokNode(name string, maxPods int) *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(nodeCPU),
		corev1.ResourceMemory: resource.MustParse(nodeMemory),
		corev1.ResourcePods:   *resource.NewQuantity(int64(maxPods), resource.DecimalSI),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{kwokAnnotation: "fake"},
			Labels:      map[string]string{fleetLabel: "true", "type": "kwok", corev1.LabelHostname: name},
		},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{{Key: fleetLabel, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res},
	}
}

// createNodes creates the named Nodes, workers at a time.
func createNodes(ctx context.Context, cs kubernetes.Interface, names []string, maxPods, workers int) error {
	var (
		mu     sync.Mutex
		failed int
		first  error
	)
	eachName(ctx, names, workers, nil, func(name string) {
		_, err := cs.CoreV1().Nodes().Create(ctx, kwokNode(name, maxPods), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			mu.Lock()
			if failed++; first == nil {
				first = fmt.Errorf("create node %s: %w", name, err)
			}
			mu.Unlock()
		}
	})
	if failed > 0 {
		return fmt.Errorf("%d of %d nodes not created, the first: %w", failed, len(names), first)
	}
	return nil
}

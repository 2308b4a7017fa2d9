package staticpod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func validPod() *corev1.Pod {
	pod := &corev1.Pod{}
	pod.Name, pod.Namespace = "web-node-1", "default"
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:1"}}
	pod.Spec.Containers = []corev1.Container{{
		Name:  "main",
		Image: "nginx:1.27",
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80, HostPort: 8080}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		},
	}}
	ApplyDefaults(pod)
	return pod
}

func TestValidateAcceptsValidPod(t *testing.T) {
	if errs := Validate(validPod()); len(errs) != 0 {
		t.Fatalf("valid pod rejected: %v", errs)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	negative := int64(-5)
	sometimes := corev1.ContainerRestartPolicy("Sometimes")
	for _, tc := range []struct {
		name   string
		mutate func(p *corev1.Pod)
		field  string
		typ    field.ErrorType
	}{
		{"name required", func(p *corev1.Pod) { p.Name = "" }, "metadata.name", field.ErrorTypeRequired},
		{"name subdomain", func(p *corev1.Pod) { p.Name = "Web" }, "metadata.name", field.ErrorTypeInvalid},
		{"namespace required", func(p *corev1.Pod) { p.Namespace = "" }, "metadata.namespace", field.ErrorTypeRequired},
		{"namespace label", func(p *corev1.Pod) { p.Namespace = "a.b" }, "metadata.namespace", field.ErrorTypeInvalid},
		{"no containers", func(p *corev1.Pod) { p.Spec.Containers = nil }, "spec.containers", field.ErrorTypeRequired},
		{"container name required", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "" }, "spec.containers[0].name", field.ErrorTypeRequired},
		{"container name label", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "a.b" }, "spec.containers[0].name", field.ErrorTypeInvalid},
		{"container name unique across init", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "init" }, "spec.containers[0].name", field.ErrorTypeDuplicate},
		{"image required", func(p *corev1.Pod) { p.Spec.Containers[0].Image = " " }, "spec.containers[0].image", field.ErrorTypeRequired},
		{"init image required", func(p *corev1.Pod) { p.Spec.InitContainers[0].Image = "" }, "spec.initContainers[0].image", field.ErrorTypeRequired},
		{"image whitespace", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx " }, "spec.containers[0].image", field.ErrorTypeInvalid},
		{"pull policy", func(p *corev1.Pod) { p.Spec.Containers[0].ImagePullPolicy = "Sometimes" }, "spec.containers[0].imagePullPolicy", field.ErrorTypeNotSupported},
		{"pull policy required", func(p *corev1.Pod) { p.Spec.InitContainers[0].ImagePullPolicy = "" }, "spec.initContainers[0].imagePullPolicy", field.ErrorTypeRequired},
		{"message policy", func(p *corev1.Pod) { p.Spec.Containers[0].TerminationMessagePolicy = "X" }, "spec.containers[0].terminationMessagePolicy", field.ErrorTypeNotSupported},
		{"container restart policy", func(p *corev1.Pod) { p.Spec.InitContainers[0].RestartPolicy = &sometimes }, "spec.initContainers[0].restartPolicy", field.ErrorTypeNotSupported},
		{"container port zero", func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 0 }, "spec.containers[0].ports[0].containerPort", field.ErrorTypeRequired},
		{"container port range", func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 65536 }, "spec.containers[0].ports[0].containerPort", field.ErrorTypeInvalid},
		{"host port range", func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].HostPort = -1 }, "spec.containers[0].ports[0].hostPort", field.ErrorTypeInvalid},
		{"protocol", func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].Protocol = "ICMP" }, "spec.containers[0].ports[0].protocol", field.ErrorTypeNotSupported},
		{"port name", func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].Name = "Not_A_Name" }, "spec.containers[0].ports[0].name", field.ErrorTypeInvalid},
		{"port name unique", func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{Name: "http", ContainerPort: 81, Protocol: "TCP"})
		}, "spec.containers[0].ports[1].name", field.ErrorTypeDuplicate},
		{"requests above limits", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1001m")
		}, "spec.containers[0].resources.requests[cpu]", field.ErrorTypeInvalid},
		{"negative limit", func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("-1Mi")
		}, "spec.containers[0].resources.limits[memory]", field.ErrorTypeInvalid},
		{"restart policy", func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" }, "spec.restartPolicy", field.ErrorTypeNotSupported},
		{"restart policy required", func(p *corev1.Pod) { p.Spec.RestartPolicy = "" }, "spec.restartPolicy", field.ErrorTypeRequired},
		{"grace period", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = &negative }, "spec.terminationGracePeriodSeconds", field.ErrorTypeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := validPod()
			tc.mutate(pod)
			errs := Validate(pod)
			if len(errs) != 1 || errs[0].Field != tc.field || errs[0].Type != tc.typ {
				t.Errorf("Validate = %v, want exactly one %s error on %s", errs, tc.typ, tc.field)
			}
		})
	}
}

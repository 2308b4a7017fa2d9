package podspec

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestVerifyRunAsNonRoot(t *testing.T) {
	yes, no := true, false
	root, user := int64(0), int64(1000)
	pod := func(psc *corev1.PodSecurityContext, csc *corev1.SecurityContext) (*corev1.Pod, *corev1.Container) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"},
			Spec: corev1.PodSpec{SecurityContext: psc, Containers: []corev1.Container{{Name: "app", SecurityContext: csc}}}}
		return p, &p.Spec.Containers[0]
	}
	const who = ` (pod: "web_ns(u1)", container: app)`
	for _, tc := range []struct {
		name      string
		psc       *corev1.PodSecurityContext
		csc       *corev1.SecurityContext
		imageUID  *int64
		imageUser string
		want      string // "" = allowed
	}{
		{name: "not asked", imageUID: &root},
		{name: "pod asks, image runs as root", psc: &corev1.PodSecurityContext{RunAsNonRoot: &yes}, imageUID: &root,
			want: "container has runAsNonRoot and image will run as root" + who},
		{name: "container asks, image runs as root", csc: &corev1.SecurityContext{RunAsNonRoot: &yes}, imageUID: &root,
			want: "container has runAsNonRoot and image will run as root" + who},
		{name: "container overrides the pod's", psc: &corev1.PodSecurityContext{RunAsNonRoot: &yes},
			csc: &corev1.SecurityContext{RunAsNonRoot: &no}, imageUID: &root},
		{name: "explicit root", csc: &corev1.SecurityContext{RunAsNonRoot: &yes, RunAsUser: &root}, imageUID: &user,
			want: "container's runAsUser breaks non-root policy" + who},
		{name: "pod's runAsUser is not root", psc: &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &user}, imageUID: &root},
		{name: "image runs as a user", psc: &corev1.PodSecurityContext{RunAsNonRoot: &yes}, imageUID: &user},
		{name: "image declares no user", psc: &corev1.PodSecurityContext{RunAsNonRoot: &yes},
			want: "container has runAsNonRoot and image will run as root" + who},
		{name: "image names its user", psc: &corev1.PodSecurityContext{RunAsNonRoot: &yes}, imageUser: "nobody",
			want: "container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root" + who},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, c := pod(tc.psc, tc.csc)
			err := VerifyRunAsNonRoot(p, c, tc.imageUID, tc.imageUser)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("got %v, want %q", err, tc.want)
			case err != nil && !errors.Is(err, ErrRunAsNonRoot):
				t.Fatalf("%v is not ErrRunAsNonRoot", err)
			}
		})
	}
}

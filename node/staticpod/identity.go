package staticpod

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Annotations the source puts on every pod, as the kubelet does.
const (
	// AnnotationConfigSource names the pod source; its value is ConfigSourceFile.
	AnnotationConfigSource = "kubernetes.io/config.source"
	// AnnotationConfigHash holds the pod's UID, the hash of its manifest.
	AnnotationConfigHash = "kubernetes.io/config.hash"
	// AnnotationConfigSeen holds when this UID was first read (RFC 3339 with
	// nanoseconds, UTC).
	AnnotationConfigSeen = "kubernetes.io/config.seen"
	// ConfigSourceFile is the AnnotationConfigSource value of static pods.
	ConfigSourceFile = "file"
)

// podUID is the hex md5 of the node, the manifest's path and the JSON encoding
// of the defaulted pod (encoding/json is deterministic: struct fields in
// declaration order, map keys sorted, quantities in canonical form).
func podUID(pod *corev1.Pod, path, nodeName string) (types.UID, error) {
	data, err := json.Marshal(pod)
	if err != nil {
		return "", fmt.Errorf("encode pod for hashing: %w", err)
	}
	h := md5.New()
	fmt.Fprintf(h, "host:%s", nodeName)
	fmt.Fprintf(h, "file:%s", path)
	h.Write(data)
	return types.UID(hex.EncodeToString(h.Sum(nil))), nil
}

// bindToNode gives a defaulted pod read from path its identity on this node:
// UID, node-suffixed name, namespace, spec.nodeName, source and hash
// annotations, the NoExecute toleration and phase Pending. The UID is computed
// first, from the pod as written (plus defaults), so none of this feeds it.
func bindToNode(pod *corev1.Pod, path, nodeName string) error {
	uid, err := podUID(pod, path, nodeName)
	if err != nil {
		return err
	}
	pod.UID = uid
	pod.Name = pod.Name + "-" + strings.ToLower(nodeName)
	if pod.Namespace == "" {
		pod.Namespace = metav1.NamespaceDefault
	}
	pod.Spec.NodeName = nodeName
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[AnnotationConfigSource] = ConfigSourceFile
	pod.Annotations[AnnotationConfigHash] = string(uid)
	addNoExecuteToleration(pod)
	pod.Status.Phase = corev1.PodPending
	return nil
}

// addNoExecuteToleration makes the pod tolerate every NoExecute taint
// forever; a matching toleration with a time limit loses its limit.
func addNoExecuteToleration(pod *corev1.Pod) {
	want := corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].MatchToleration(&want) {
			pod.Spec.Tolerations[i] = want
			return
		}
	}
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, want)
}

// stampSeen sets the config.seen annotation.
func stampSeen(pod *corev1.Pod, at time.Time) {
	pod.Annotations[AnnotationConfigSeen] = at.UTC().Format(time.RFC3339Nano)
}

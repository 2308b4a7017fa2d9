package statuswriter

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// syncMirror keeps a static pod's mirror pod: present while the static pod
// runs, with its status; deleted once the static pod is removed.
func (w *Writer) syncMirror(ctx context.Context, v view) error {
	ns, name := v.pod.Namespace, v.pod.Name
	hash := v.pod.Annotations[annotationHash]
	mirror, err := w.opts.Pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		mirror = nil
	} else if err != nil {
		return fmt.Errorf("mirror pod %s/%s: %w", ns, name, err)
	}
	if mirror != nil && mirror.Annotations[annotationMirror] == "" {
		// An API pod of the same name: not ours to touch.
		if !v.removed {
			w.log.Warn("a pod with the static pod's name exists in the API; no mirror pod", zap.String("pod", ns+"/"+name))
		}
		w.wrote(v.uid, v.seq, nil)
		return nil
	}
	if v.removed {
		if mirror != nil && mirror.Annotations[annotationMirror] == hash {
			return w.deletePod(ctx, v, ns, name, mirror.UID)
		}
		w.forget(v.uid, v.seq)
		return nil
	}
	if mirror != nil && (mirror.Annotations[annotationMirror] != hash || mirror.DeletionTimestamp != nil) {
		// Stale (an older version of the manifest) or being deleted:
		// delete it and create ours on the next round.
		if err := w.deletePod(ctx, view{}, ns, name, mirror.UID); err != nil {
			return err
		}
		return fmt.Errorf("mirror pod %s/%s was stale; re-creating", ns, name)
	}
	if mirror == nil {
		created, err := w.createMirror(ctx, v.pod)
		if apierrors.IsAlreadyExists(err) {
			// The cache lags behind the API server (its watch backs off
			// after an outage, while an earlier create went through):
			// read the pod itself, and take it if it is this static pod's.
			created, err = w.existingMirror(ctx, ns, name, hash, err)
		}
		if err != nil {
			return err
		}
		mirror = created
		v.server = created
	}
	if v.written >= v.seq && v.server != nil && v.server.UID == mirror.UID {
		if !changedSince(v.server, mirror) {
			return nil
		}
		v.server = mirror // changed by someone else: re-check our status
	}
	return w.writeStatus(ctx, v, mirror.UID)
}

// MirrorChanged re-checks the static pod of a mirror pod the API server
// added, changed or deleted (someone deleted it: it is re-created at once,
// not at the next resync). It never blocks.
func (w *Writer) MirrorChanged(mirror *corev1.Pod) {
	uid := mirror.Annotations[annotationMirror] // the static pod's UID is its hash
	w.mu.Lock()
	_, ok := w.pods[uid]
	w.mu.Unlock()
	if ok {
		w.queue.Add(uid)
	}
}

// createMirror creates the mirror pod of a static pod, owned by the Node
// (the NodeRestriction admission plugin requires both).
func (w *Writer) createMirror(ctx context.Context, static *corev1.Pod) (*corev1.Pod, error) {
	owner, err := w.node(ctx)
	if err != nil {
		return nil, err
	}
	m := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: static.Name, Namespace: static.Namespace,
			Labels: static.Labels, Annotations: map[string]string{},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: w.opts.NodeName, UID: owner, Controller: ptrTrue()}},
		},
		Spec: *static.Spec.DeepCopy(),
	}
	for k, val := range static.Annotations {
		m.Annotations[k] = val
	}
	m.Annotations[annotationMirror] = static.Annotations[annotationHash]
	m.Spec.NodeName = w.opts.NodeName
	created, err := w.opts.Client.CoreV1().Pods(m.Namespace).Create(ctx, m, metav1.CreateOptions{})
	if err != nil {
		if apierrors.IsForbidden(err) {
			w.nodeMu.Lock()
			w.nodeUID = "" // the Node may have been registered again
			w.nodeMu.Unlock()
		}
		return nil, fmt.Errorf("create mirror pod %s/%s: %w", m.Namespace, m.Name, err)
	}
	w.log.Info("created mirror pod", zap.String("pod", m.Namespace+"/"+m.Name), zap.String("uid", string(created.UID)))
	return created, nil
}

// existingMirror reads the pod ns/name a create found existing: this static
// pod's mirror (same hash, not being deleted) is returned; anything else
// returns createErr, to be tried again once the cache shows it.
func (w *Writer) existingMirror(ctx context.Context, ns, name, hash string, createErr error) (*corev1.Pod, error) {
	p, err := w.opts.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w; reading it: %w", createErr, err)
	}
	if p.Annotations[annotationMirror] != hash || p.DeletionTimestamp != nil {
		return nil, createErr
	}
	return p, nil
}

// node is the Node's UID, read once.
func (w *Writer) node(ctx context.Context) (types.UID, error) {
	w.nodeMu.Lock()
	defer w.nodeMu.Unlock()
	if w.nodeUID != "" {
		return w.nodeUID, nil
	}
	n, err := w.opts.Client.CoreV1().Nodes().Get(ctx, w.opts.NodeName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("node %s for a mirror pod's owner: %w", w.opts.NodeName, err)
	}
	w.nodeUID = n.UID
	return n.UID, nil
}

func ptrTrue() *bool { t := true; return &t }

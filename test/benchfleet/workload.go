package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/time/rate"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

const (
	// fleetLabel and its taint keep the bench's pods on the bench's nodes
	// (both sides' nodes carry both; the pods select and tolerate them).
	fleetLabel = "bench.actorlet.io/fleet"
	// roleLabel tells the pods' behaviours apart.
	roleLabel    = "bench.actorlet.io/role"
	roleSteady   = "steady"
	roleCrash    = "crash"
	roleProbeBad = "probe-failing"
)

// Environment of the simulated runtime's containers (cri/sim/behaviour.go);
// KWOK ignores them.
const (
	simExitAfter    = "SIM_EXIT_AFTER"
	simExitCode     = "SIM_EXIT_CODE"
	simExecExitCode = "SIM_EXEC_EXIT_CODE"
)

// deployment is the Deployment name of n pods of one role, kept on the
// bench's nodes.
func deployment(name, role string, n int32) *appsv1.Deployment {
	t := podTemplate(name, role)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &n,
			Selector: &metav1.LabelSelector{MatchLabels: t.Labels},
			Template: t,
		},
	}
}

// podTemplate is the pod of one role of the workload name: selecting and
// tolerating the bench's nodes, its behaviour (for actorlet's simulated
// runtime) by role.
func podTemplate(name, role string) corev1.PodTemplateSpec {
	labels := map[string]string{"app": name, roleLabel: role}
	c := corev1.Container{Name: "c", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: corev1.PullIfNotPresent}
	switch role {
	case roleCrash:
		// exits 1 five seconds after each start: CrashLoopBackOff
		c.Env = []corev1.EnvVar{{Name: simExitAfter, Value: "5s"}, {Name: simExitCode, Value: "1"}}
	case roleProbeBad:
		// every exec fails: never Ready
		c.Env = []corev1.EnvVar{{Name: simExecExitCode, Value: "1"}}
		c.ReadinessProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}},
			PeriodSeconds: 10,
		}
	}
	grace := int64(5)
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{c},
			NodeSelector:                  map[string]string{fleetLabel: "true"},
			Tolerations:                   []corev1.Toleration{{Key: fleetLabel, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			TerminationGracePeriodSeconds: &grace,
		},
	}
}

// scaleToZero sets every Deployment of the namespace to 0 replicas (the
// ReplicaSet controller then deletes their pods), retrying on conflicts.
func scaleToZero(ctx context.Context, cs kubernetes.Interface, ns string) error {
	ds, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list deployments of %s: %w", ns, err)
	}
	for _, d := range ds.Items {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := cs.AppsV1().Deployments(ns).Get(ctx, d.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			zero := int32(0)
			cur.Spec.Replicas = &zero
			_, err = cs.AppsV1().Deployments(ns).Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("scale deployment %s/%s to 0: %w", ns, d.Name, err)
		}
	}
	return nil
}

// deleteDeployments deletes every Deployment of the namespace (after their
// pods are gone: their ReplicaSets go with them).
func deleteDeployments(ctx context.Context, cs kubernetes.Interface, ns string) error {
	ds, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list deployments of %s: %w", ns, err)
	}
	bg := metav1.DeletePropagationBackground
	for _, d := range ds.Items {
		err := cs.AppsV1().Deployments(ns).Delete(ctx, d.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete deployment %s/%s: %w", ns, d.Name, err)
		}
	}
	return nil
}

// deletePods deletes the named pods one by one, workers at a time (the
// fallback when the controllers leave pods behind: a DeleteCollection of
// 10,000 pods times out on the API server). It returns how many calls
// failed other than with NotFound.
func deletePods(ctx context.Context, cs kubernetes.Interface, ns string, names []string, workers int, limit *rate.Limiter) int {
	var failed atomic.Int64
	eachName(ctx, names, workers, limit, func(name string) {
		err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			failed.Add(1)
		}
	})
	return int(failed.Load())
}

// eachName calls do with every name, workers calls at a time and, with a
// limiter, no faster than it allows, until the names or ctx end; it returns
// once every call has.
func eachName(ctx context.Context, names []string, workers int, limit *rate.Limiter, do func(name string)) {
	ch := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range ch {
				do(name)
			}
		}()
	}
	for _, n := range names {
		if limit != nil && limit.Wait(ctx) != nil {
			break
		}
		select {
		case ch <- n:
		case <-ctx.Done():
		}
	}
	close(ch)
	wg.Wait()
}

package actors

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/actors/lifecycle"
	"github.com/actorlet/actorlet/podspec"
)

// updateResources carries out an in-place resize: the running container
// gets the Linux resources of its spec with the effect's CPU and memory (its
// allocation), as a container of that spec would be created with. The call
// is idempotent: the same resources again change nothing.
func (a *containerActor) updateResources(ctx context.Context, pod *corev1.Pod, e lifecycle.UpdateContainerResources) error {
	spec := specContainer(pod, e.Name)
	if spec == nil {
		return fmt.Errorf("pod %s has no container %q", a.uid, e.Name)
	}
	c := spec.DeepCopy()
	c.Resources = e.Requirements(c.Resources)
	req := podspec.UpdateContainerResourcesRequest(pod, c, e.ID, a.deps.PodConfig)
	if err := a.deps.Runtime.UpdateContainerResources(ctx, e.ID, req.Linux); err != nil {
		return fmt.Errorf("resize container %q (%s) of pod %s: %w", e.Name, e.ID, a.uid, err)
	}
	return nil
}

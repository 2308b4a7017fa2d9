package sim

import (
	"context"
	"encoding/json"
	"slices"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ContainerStatus returns the container's full status. With verbose,
// info["info"] is a JSON object with its simulated behaviour. NotFound for
// an unknown ID.
func (r *Runtime) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	unlock, err := r.begin(ctx, "ContainerStatus")
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, ok := r.containers[req.GetContainerId()]
	if !ok {
		return nil, newErr(ErrNotFound, "ContainerStatus: container %q not found", req.GetContainerId())
	}
	resp := &runtimeapi.ContainerStatusResponse{Status: r.containerStatusLocked(c)}
	if req.GetVerbose() {
		b := c.behaviour
		m := map[string]any{
			"simulated":    true,
			"sandboxID":    c.sb.id,
			"name":         c.String(),
			"stopExitCode": b.stopExitCode,
			"stopDelay":    b.stopDelay.String(),
			"execExitCode": b.execExitCode,
		}
		if b.exits {
			m["exitAfter"], m["exitCode"], m["exitReason"] = b.exitAfter.String(), b.exitCode, b.exitReason
		}
		if c.pending != nil {
			m["pendingExitAt"], m["pendingExitCode"] = c.pending.at, c.pending.code
		}
		info, _ := json.Marshal(m)
		resp.Info = map[string]string{"info": string(info)}
	}
	return resp, nil
}

// ListContainers lists the containers matching every set field of the
// filter (exact ID, state, sandbox ID, all label pairs), oldest first.
func (r *Runtime) ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	items, err := r.listContainers(ctx, "ListContainers", req.GetFilter())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ListContainersResponse{Containers: items}, nil
}

// StreamContainers is ListContainers in chunks of at most 500.
func (r *Runtime) StreamContainers(req *runtimeapi.StreamContainersRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamContainersResponse]) error {
	items, err := r.listContainers(stream.Context(), "StreamContainers", req.GetFilter())
	if err != nil {
		return err
	}
	return sendChunks(items, func(c []*runtimeapi.Container) error {
		return stream.Send(&runtimeapi.StreamContainersResponse{Containers: c})
	})
}

func (r *Runtime) listContainers(ctx context.Context, method string, f *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	unlock, err := r.begin(ctx, method)
	if err != nil {
		return nil, err
	}
	defer unlock()
	matched := r.matchContainersLocked(f.GetId(), f.GetPodSandboxId(), f.GetLabelSelector(), func(c *container) bool { return c.matches(f) })
	items := make([]*runtimeapi.Container, len(matched))
	for i, c := range matched {
		items[i] = c.toCRI()
	}
	return items, nil
}

// matchContainersLocked returns the containers for which keep is true,
// oldest first. keep must imply the filter's ID, sandbox ID and label
// selector; they only narrow the candidates: the container with that
// ID, else the fewer of the sandbox's containers and those whose
// io.kubernetes.pod.uid label the selector pins, else all of them.
func (r *Runtime) matchContainersLocked(id, sandboxID string, sel map[string]string, keep func(*container) bool) []*container {
	var out []*container
	collect := func(c *container) {
		if keep(c) {
			out = append(out, c)
		}
	}
	if id != "" {
		if c, ok := r.containers[id]; ok {
			collect(c)
		}
		return out
	}
	var inSandbox []*container
	if sandboxID != "" {
		sb, ok := r.sandboxes[sandboxID]
		if !ok {
			return nil // a container is removed with its sandbox
		}
		inSandbox = sb.containers
	}
	pinned, byPod := r.containersByPod.lookup(sel)
	switch {
	case byPod && (sandboxID == "" || len(pinned) <= len(inSandbox)):
		for _, c := range pinned {
			collect(c)
		}
	case sandboxID != "":
		for _, c := range inSandbox {
			collect(c)
		}
	default:
		for _, c := range r.containers {
			collect(c)
		}
	}
	slices.SortFunc(out, compareContainers)
	return out
}

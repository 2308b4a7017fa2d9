package sim

import (
	"context"
	"encoding/json"
	"slices"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// PodSandboxStatus returns the sandbox's status, the statuses of all its
// containers and the time they were taken. With verbose, info["info"] is
// a JSON object with simulator details. NotFound for an unknown ID.
func (r *Runtime) PodSandboxStatus(ctx context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	unlock, err := r.begin(ctx, "PodSandboxStatus")
	if err != nil {
		return nil, err
	}
	defer unlock()
	sb, ok := r.sandboxes[req.GetPodSandboxId()]
	if !ok {
		return nil, newErr(ErrNotFound, "PodSandboxStatus: sandbox %q not found", req.GetPodSandboxId())
	}
	resp := &runtimeapi.PodSandboxStatusResponse{Status: sb.status(), Timestamp: r.now()}
	for _, c := range sb.sortedContainers() {
		resp.ContainersStatuses = append(resp.ContainersStatuses, r.containerStatusLocked(c))
	}
	if req.GetVerbose() {
		info, _ := json.Marshal(map[string]any{
			"simulated":   true,
			"name":        sb.String(),
			"podUID":      sb.podUID(),
			"hostNetwork": !sb.ipPooled && sb.ip == r.hostIP,
			"containers":  len(sb.containers),
		})
		resp.Info = map[string]string{"info": string(info)}
	}
	return resp, nil
}

// ListPodSandbox lists the sandboxes matching every set field of the
// filter (exact ID, state, all label pairs), oldest first.
func (r *Runtime) ListPodSandbox(ctx context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	items, err := r.listSandboxes(ctx, "ListPodSandbox", req.GetFilter())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ListPodSandboxResponse{Items: items}, nil
}

// StreamPodSandboxes is ListPodSandbox in chunks of at most 500.
func (r *Runtime) StreamPodSandboxes(req *runtimeapi.StreamPodSandboxesRequest, stream grpc.ServerStreamingServer[runtimeapi.StreamPodSandboxesResponse]) error {
	items, err := r.listSandboxes(stream.Context(), "StreamPodSandboxes", req.GetFilter())
	if err != nil {
		return err
	}
	return sendChunks(items, func(c []*runtimeapi.PodSandbox) error {
		return stream.Send(&runtimeapi.StreamPodSandboxesResponse{PodSandboxes: c})
	})
}

func (r *Runtime) listSandboxes(ctx context.Context, method string, f *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	unlock, err := r.begin(ctx, method)
	if err != nil {
		return nil, err
	}
	defer unlock()
	matched := r.matchSandboxesLocked(f.GetId(), f.GetLabelSelector(), func(sb *sandbox) bool { return sb.matches(f) })
	items := make([]*runtimeapi.PodSandbox, len(matched))
	for i, sb := range matched {
		items[i] = sb.toCRI()
	}
	return items, nil
}

// matchSandboxesLocked returns the sandboxes for which keep is true,
// oldest first. keep must imply the filter's ID and label selector; they
// only narrow the candidates: the sandbox with that ID, else those whose
// io.kubernetes.pod.uid label the selector pins, else all of them.
func (r *Runtime) matchSandboxesLocked(id string, sel map[string]string, keep func(*sandbox) bool) []*sandbox {
	var out []*sandbox
	collect := func(sb *sandbox) {
		if keep(sb) {
			out = append(out, sb)
		}
	}
	if id != "" {
		if sb, ok := r.sandboxes[id]; ok {
			collect(sb)
		}
		return out
	}
	if pinned, ok := r.sandboxesByPod.lookup(sel); ok {
		for _, sb := range pinned {
			collect(sb)
		}
	} else {
		for _, sb := range r.sandboxes {
			collect(sb)
		}
	}
	sortSandboxes(out)
	return out
}

// UpdatePodSandboxResources accepts any resources for an existing
// sandbox; NotFound otherwise.
func (r *Runtime) UpdatePodSandboxResources(ctx context.Context, req *runtimeapi.UpdatePodSandboxResourcesRequest) (*runtimeapi.UpdatePodSandboxResourcesResponse, error) {
	unlock, err := r.begin(ctx, "UpdatePodSandboxResources")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, ok := r.sandboxes[req.GetPodSandboxId()]; !ok {
		return nil, newErr(ErrNotFound, "UpdatePodSandboxResources: sandbox %q not found", req.GetPodSandboxId())
	}
	return &runtimeapi.UpdatePodSandboxResourcesResponse{}, nil
}

// streamChunk is the most items per message of the Stream* RPCs.
const streamChunk = 500

// sendChunks sends items in chunks of at most streamChunk, none empty
// (the CRI: "lists of at least one item").
func sendChunks[T any](items []T, send func([]T) error) error {
	for c := range slices.Chunk(items, streamChunk) {
		if err := send(c); err != nil {
			return err
		}
	}
	return nil
}

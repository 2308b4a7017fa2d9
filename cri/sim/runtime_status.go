package sim

import (
	"context"
	"encoding/json"
	"net/netip"
	"slices"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// kubeletAPIVersion is the CRI "version" field runtimes answer with.
const kubeletAPIVersion = "0.1.0"

// Version returns Options.RuntimeName and RuntimeVersion and API "v1".
func (r *Runtime) Version(ctx context.Context, _ *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	if err := r.wait(ctx, "Version"); err != nil {
		return nil, err
	}
	return &runtimeapi.VersionResponse{
		Version:           kubeletAPIVersion,
		RuntimeName:       r.opts.RuntimeName,
		RuntimeVersion:    r.opts.RuntimeVersion,
		RuntimeApiVersion: "v1",
	}, nil
}

// Status reports RuntimeReady and NetworkReady as true, the runtime
// handlers and features. With verbose, info[InfoKey] is the JSON of Info.
func (r *Runtime) Status(ctx context.Context, req *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	unlock, err := r.begin(ctx, "Status")
	if err != nil {
		return nil, err
	}
	defer unlock()
	resp := &runtimeapi.StatusResponse{
		Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
			{Type: runtimeapi.RuntimeReady, Status: true},
			{Type: runtimeapi.NetworkReady, Status: true},
		}},
		Features: &runtimeapi.RuntimeFeatures{SupplementalGroupsPolicy: true, MountOptions: true},
	}
	handlers := make([]string, 0, len(r.handlers))
	for h := range r.handlers {
		handlers = append(handlers, h)
	}
	slices.Sort(handlers)
	for _, h := range handlers {
		resp.RuntimeHandlers = append(resp.RuntimeHandlers, &runtimeapi.RuntimeHandler{
			Name:     h,
			Features: &runtimeapi.RuntimeHandlerFeatures{RecursiveReadOnlyMounts: true, UserNamespaces: true},
		})
	}
	if req.GetVerbose() {
		info, err := json.Marshal(r.infoLocked())
		if err != nil {
			return nil, err
		}
		resp.Info = map[string]string{InfoKey: string(info)}
	}
	return resp, nil
}

// RuntimeConfig reports the systemd cgroup driver.
func (r *Runtime) RuntimeConfig(ctx context.Context, _ *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	if err := r.wait(ctx, "RuntimeConfig"); err != nil {
		return nil, err
	}
	return &runtimeapi.RuntimeConfigResponse{
		Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_SYSTEMD},
	}, nil
}

// UpdateRuntimeConfig with a pod CIDR makes later sandboxes get their IPs
// from it; addresses already handed out stay reserved until released.
// Errors: InvalidArgument for an unparsable or too small CIDR.
func (r *Runtime) UpdateRuntimeConfig(ctx context.Context, req *runtimeapi.UpdateRuntimeConfigRequest) (*runtimeapi.UpdateRuntimeConfigResponse, error) {
	cidr := req.GetRuntimeConfig().GetNetworkConfig().GetPodCidr()
	var prefix netip.Prefix
	if cidr != "" {
		var err error
		if prefix, err = netip.ParsePrefix(cidr); err != nil {
			return nil, newErr(ErrInvalidArgument, "UpdateRuntimeConfig: pod CIDR %q: %v", cidr, err)
		}
	}
	unlock, err := r.begin(ctx, "UpdateRuntimeConfig")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if cidr == "" || prefix.Masked() == r.ipam.prefix {
		return &runtimeapi.UpdateRuntimeConfigResponse{}, nil
	}
	if err := r.ipam.reset(prefix); err != nil {
		return nil, newErr(ErrInvalidArgument, "UpdateRuntimeConfig: %v", err)
	}
	r.log.Info("pod CIDR changed", zap.Stringer("podCIDR", prefix.Masked()))
	return &runtimeapi.UpdateRuntimeConfigResponse{}, nil
}

package faults

import (
	"path"
	"slices"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// eventsMethod is the one server-streaming RPC of CRI v1.
const eventsMethod = "GetContainerEvents"

// Methods are the short names of every CRI v1 RPC (RuntimeService and
// ImageService), the keys Plan.RPCs accepts besides AnyMethod.
func Methods() []string {
	var out []string
	for _, sd := range []grpc.ServiceDesc{runtimeapi.RuntimeService_ServiceDesc, runtimeapi.ImageService_ServiceDesc} {
		for _, m := range sd.Methods {
			out = append(out, m.MethodName)
		}
		for _, s := range sd.Streams {
			out = append(out, s.StreamName)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// shortMethod turns "/runtime.v1.RuntimeService/RunPodSandbox" into
// "RunPodSandbox".
func shortMethod(fullMethod string) string { return path.Base(fullMethod) }

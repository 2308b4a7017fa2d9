package sim

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Direct hands the runtime's replies over to the caller without copying
// them (serve.DirectOptions.OwnReplies): every reply must be made for its
// call, sharing no message, list, map or bytes with the runtime's records
// or with another reply. TestRepliesShareNothing changes every part of a
// reply in place and checks that the next call's reply is as the first
// one was before the change.

// replyCall is one unary method called with fixed requests.
type replyCall struct {
	name string
	call func(ctx context.Context) (proto.Message, error)
}

func TestRepliesShareNothing(t *testing.T) {
	for _, tc := range recordCases() {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			rt := newRuntime(t, Options{Clock: newFakeClock(), RuntimeHandlers: []string{"runsc"}})
			pull(t, ctx, rt, "busybox")
			sbResp, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: proto.Clone(tc.sb).(*runtimeapi.PodSandboxConfig), RuntimeHandler: tc.handler})
			noErr(t, err, "RunPodSandbox")
			sbID := sbResp.PodSandboxId
			createSbCfg := proto.Clone(tc.sb).(*runtimeapi.PodSandboxConfig)
			if tc.logDir != "" {
				createSbCfg.LogDirectory = tc.logDir
			}
			cResp, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sbID, Config: proto.Clone(tc.c).(*runtimeapi.ContainerConfig), SandboxConfig: createSbCfg})
			noErr(t, err, "CreateContainer")
			id := cResp.ContainerId
			startContainer(t, ctx, rt, id)

			for _, c := range replyCalls(rt, sbID, id) {
				first, err := c.call(ctx)
				noErr(t, err, c.name)
				want := proto.Clone(first)
				scramble(first.ProtoReflect(), 7)
				if proto.Equal(first, want) {
					t.Fatalf("%s: scrambling the reply changed nothing: %v", c.name, first)
				}
				again, err := c.call(ctx)
				noErr(t, err, c.name+" again")
				wantEqual(t, c.name+" after the first reply was changed", again, want)
			}
		})
	}
}

// replyCalls are the runtime's unary methods that answer with more than
// an ID, on the sandbox sbID and its container id.
func replyCalls(rt *Runtime, sbID, id string) []replyCall {
	return []replyCall{
		{"Version", func(ctx context.Context) (proto.Message, error) {
			return rt.Version(ctx, &runtimeapi.VersionRequest{})
		}},
		{"Status verbose", func(ctx context.Context) (proto.Message, error) {
			return rt.Status(ctx, &runtimeapi.StatusRequest{Verbose: true})
		}},
		{"RuntimeConfig", func(ctx context.Context) (proto.Message, error) {
			return rt.RuntimeConfig(ctx, &runtimeapi.RuntimeConfigRequest{})
		}},
		{"PodSandboxStatus verbose", func(ctx context.Context) (proto.Message, error) {
			return rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sbID, Verbose: true})
		}},
		{"ListPodSandbox", func(ctx context.Context) (proto.Message, error) {
			return rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
		}},
		{"ContainerStatus verbose", func(ctx context.Context) (proto.Message, error) {
			return rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
		}},
		{"ListContainers", func(ctx context.Context) (proto.Message, error) {
			return rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
		}},
		{"ContainerStats", func(ctx context.Context) (proto.Message, error) {
			return rt.ContainerStats(ctx, &runtimeapi.ContainerStatsRequest{ContainerId: id})
		}},
		{"ListContainerStats", func(ctx context.Context) (proto.Message, error) {
			return rt.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
		}},
		{"PodSandboxStats", func(ctx context.Context) (proto.Message, error) {
			return rt.PodSandboxStats(ctx, &runtimeapi.PodSandboxStatsRequest{PodSandboxId: sbID})
		}},
		{"ListPodSandboxStats", func(ctx context.Context) (proto.Message, error) {
			return rt.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{})
		}},
		{"ImageStatus verbose", func(ctx context.Context) (proto.Message, error) {
			return rt.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}, Verbose: true})
		}},
		{"ListImages", func(ctx context.Context) (proto.Message, error) {
			return rt.ListImages(ctx, &runtimeapi.ListImagesRequest{})
		}},
		{"ImageFsInfo", func(ctx context.Context) (proto.Message, error) {
			return rt.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
		}},
		{"ExecSync", func(ctx context.Context) (proto.Message, error) {
			return rt.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"true"}})
		}},
	}
}

// scramble changes, in place, every part of m that a reply could share
// with something else: each map entry and a new one, each list element,
// each message field (recursively) and the bytes of each bytes field.
// Scalars and strings cannot be shared and are changed too, so that an
// empty message still differs afterwards.
func scramble(m protoreflect.Message, n int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			var keys []protoreflect.MapKey
			mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool { keys = append(keys, k); return true })
			for j, k := range keys {
				if fd.MapValue().Message() != nil {
					scramble(mp.Mutable(k).Message(), n+j)
				} else {
					mp.Set(k, fillValue(fd.MapValue(), n+j))
				}
			}
			mp.Set(fillValue(fd.MapKey(), n+len(keys)).MapKey(), newValue(mp, fd.MapValue(), n))
		case fd.IsList():
			if !m.Has(fd) {
				continue
			}
			l := m.Mutable(fd).List()
			for j := range l.Len() {
				switch {
				case fd.Message() != nil:
					scramble(l.Get(j).Message(), n+j)
				case fd.Kind() == protoreflect.BytesKind:
					flip(l.Get(j).Bytes())
				default:
					l.Set(j, fillValue(fd, n+j))
				}
			}
		case fd.Message() != nil:
			if m.Has(fd) {
				scramble(m.Mutable(fd).Message(), n+i)
			} else {
				fillAll(m.Mutable(fd).Message(), n+i)
			}
		case fd.Kind() == protoreflect.BytesKind && m.Has(fd):
			flip(m.Get(fd).Bytes())
		case fd.ContainingOneof() != nil:
			// setting one member of a oneof clears the others: left alone
		case fd.Kind() == protoreflect.EnumKind && fd.Enum().Values().Len() < 2:
		default:
			m.Set(fd, fillValue(fd, n+i))
		}
	}
}

// newValue is a value for a new entry of mp: a filled message, or a
// scalar from fillValue.
func newValue(mp protoreflect.Map, fd protoreflect.FieldDescriptor, n int) protoreflect.Value {
	if fd.Message() == nil {
		return fillValue(fd, n)
	}
	v := mp.NewValue()
	fillAll(v.Message(), n)
	return v
}

// flip inverts b's bytes in place.
func flip(b []byte) {
	for i := range b {
		b[i] ^= 0xff
	}
}

package sim

import (
	"fmt"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The runtime keeps what RunPodSandbox and CreateContainer were given in
// its own form (see container and sandbox); these tests check that every
// response gives it back exactly as the configs had it (proto.Equal, so
// unknown fields count too), whatever field of the kept messages is set.

// recordCase is a pair of configs to run and read back.
type recordCase struct {
	name    string
	sb      *runtimeapi.PodSandboxConfig
	c       *runtimeapi.ContainerConfig
	handler string // runtime handler of RunPodSandbox
	logDir  string // if set, the log directory of CreateContainer's sandbox config
}

// recordBaseConfigs are configs of actorlet's shape (see podspec).
func recordBaseConfigs() (*runtimeapi.PodSandboxConfig, *runtimeapi.ContainerConfig) {
	const uid = "00000000-0000-4000-8000-000000000001"
	sb := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default", Uid: uid, Attempt: 1},
		Labels: map[string]string{
			LabelPodUID: uid, "io.kubernetes.pod.name": "web", "io.kubernetes.pod.namespace": "default",
			benchLabelManaged: "true", "app": "web",
		},
		Annotations:  map[string]string{"note": "a pod"},
		LogDirectory: "/var/log/pods/default_web_" + uid,
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER, Ipc: runtimeapi.NamespaceMode_POD},
		}},
	}
	c := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: 1},
		Image:    &runtimeapi.ImageSpec{Image: "busybox", UserSpecifiedImage: "busybox"},
		Labels: map[string]string{
			LabelPodUID: uid, "io.kubernetes.pod.name": "web", "io.kubernetes.pod.namespace": "default",
			benchLabelContainerName: "app", benchLabelManaged: "true",
		},
		Annotations: map[string]string{
			"io.kubernetes.container.restartCount":           "0",
			"io.kubernetes.container.terminationMessagePath": "/dev/termination-log",
		},
		LogPath: "app/0.log",
		Mounts: []*runtimeapi.Mount{
			{ContainerPath: "/dev/termination-log", HostPath: "/var/lib/actorlet/pods/" + uid + "/termination.app.1"},
			{ContainerPath: "/etc/hosts", HostPath: "/var/lib/actorlet/pods/" + uid + "/etc-hosts"},
		},
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources: &runtimeapi.LinuxContainerResources{CpuShares: 2, OomScoreAdj: 1000},
		},
	}
	return sb, c
}

// recordCases are the base configs; with each field of each kept message
// set in turn (fillField); with all of them set at once; with unknown
// fields; and without the optional parts.
func recordCases() []recordCase {
	var cases []recordCase
	add := func(name string, edit func(sb *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig)) {
		sb, c := recordBaseConfigs()
		edit(sb, c)
		cases = append(cases, recordCase{name: name, sb: sb, c: c})
	}
	add("actorlet", func(*runtimeapi.PodSandboxConfig, *runtimeapi.ContainerConfig) {})
	// kept lists the messages the runtime keeps, as found in a pair of configs.
	kept := []struct {
		name string
		msg  func(sb *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) proto.Message
	}{
		{"sandbox.metadata", func(sb *runtimeapi.PodSandboxConfig, _ *runtimeapi.ContainerConfig) proto.Message {
			return sb.Metadata
		}},
		{"sandbox.namespace_options", func(sb *runtimeapi.PodSandboxConfig, _ *runtimeapi.ContainerConfig) proto.Message {
			return sb.Linux.SecurityContext.NamespaceOptions
		}},
		{"container.metadata", func(_ *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) proto.Message {
			return c.Metadata
		}},
		{"container.image", func(_ *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) proto.Message {
			return c.Image
		}},
		{"container.mounts[0]", func(_ *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) proto.Message {
			return c.Mounts[0]
		}},
		{"container.mounts[1]", func(_ *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) proto.Message {
			return c.Mounts[1]
		}},
		{"container.resources", func(_ *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) proto.Message {
			return c.Linux.Resources
		}},
	}
	for _, k := range kept {
		sb, c := recordBaseConfigs()
		fields := k.msg(sb, c).ProtoReflect().Descriptor().Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			add(k.name+"."+string(fd.Name()), func(sb *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) {
				m := k.msg(sb, c).ProtoReflect()
				fillField(m, fd, 1)
				keepRunnable(sb, c)
			})
		}
		add(k.name+" unknown fields", func(sb *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) {
			m := k.msg(sb, c).ProtoReflect()
			m.SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 999, protowire.VarintType), 42))
		})
	}
	add("all fields", func(sb *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) {
		for _, k := range kept {
			fillAll(k.msg(sb, c).ProtoReflect(), 1)
		}
		keepRunnable(sb, c)
		c.StopSignal = runtimeapi.Signal_SIGNAL_SIGQUIT
		c.Linux.SecurityContext = &runtimeapi.LinuxContainerSecurityContext{
			RunAsUser:          &runtimeapi.Int64Value{Value: 1000},
			RunAsGroup:         &runtimeapi.Int64Value{Value: 2000},
			SupplementalGroups: []int64{3000, 3001},
		}
	})
	cases[len(cases)-1].handler = "runsc"
	add("runAsUser only", func(_ *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) {
		c.Linux.SecurityContext = &runtimeapi.LinuxContainerSecurityContext{RunAsUser: &runtimeapi.Int64Value{Value: 0}}
	})
	add("image by ID, no user-specified image", func(_ *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) {
		c.Image = &runtimeapi.ImageSpec{Image: imageID(mustParseRef("busybox"))}
	})
	add("another log directory at CreateContainer", func(*runtimeapi.PodSandboxConfig, *runtimeapi.ContainerConfig) {})
	cases[len(cases)-1].logDir = "/var/log/elsewhere"
	add("a log directory at CreateContainer only", func(sb *runtimeapi.PodSandboxConfig, _ *runtimeapi.ContainerConfig) {
		sb.LogDirectory = ""
	})
	cases[len(cases)-1].logDir = "/var/log/elsewhere"
	add("nothing optional", func(sb *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) {
		sb.Labels, sb.Annotations, sb.Linux, sb.LogDirectory = nil, nil, nil, ""
		c.Labels, c.Annotations, c.Mounts, c.Linux, c.LogPath = nil, nil, nil, nil, ""
	})
	add("empty resources and namespace options", func(sb *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) {
		sb.Linux.SecurityContext.NamespaceOptions = &runtimeapi.NamespaceOption{}
		c.Linux.Resources = &runtimeapi.LinuxContainerResources{}
	})
	return cases
}

// keepRunnable undoes what filling fields did to configs the runtime must
// accept: a pulled image, the default runtime handler.
func keepRunnable(sb *runtimeapi.PodSandboxConfig, c *runtimeapi.ContainerConfig) {
	c.Image.Image = "busybox"
	if ns := sb.Linux.GetSecurityContext().GetNamespaceOptions(); ns.GetNetwork() == runtimeapi.NamespaceMode_NODE {
		ns.Network = runtimeapi.NamespaceMode_POD
	}
}

func mustParseRef(s string) imageRef {
	r, err := parseImageRef(s)
	if err != nil {
		panic(err)
	}
	return r
}

// fillAll sets every field of m (fillField).
func fillAll(m protoreflect.Message, n int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fillField(m, fields.Get(i), n+i)
	}
}

// fillField sets fd in m to a value that is not its default, derived from
// n: a list gets two elements, a map two entries, a message every field.
func fillField(m protoreflect.Message, fd protoreflect.FieldDescriptor, n int) {
	switch {
	case fd.IsMap():
		mp := m.Mutable(fd).Map()
		for i := range 2 {
			mp.Set(fillValue(fd.MapKey(), n+i).MapKey(), fillValue(fd.MapValue(), n+i))
		}
	case fd.IsList():
		l := m.Mutable(fd).List()
		for i := range 2 {
			if fd.Message() != nil {
				e := l.NewElement()
				fillAll(e.Message(), n+i)
				l.Append(e)
			} else {
				l.Append(fillValue(fd, n+i))
			}
		}
	case fd.Message() != nil:
		fillAll(m.Mutable(fd).Message(), n)
	default:
		m.Set(fd, fillValue(fd, n))
	}
}

// fillValue is a scalar of fd's kind that is not its default.
func fillValue(fd protoreflect.FieldDescriptor, n int) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(fmt.Sprintf("%s-%d", fd.Name(), n))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(fmt.Sprintf("%s-%d", fd.Name(), n)))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		return protoreflect.ValueOfEnum(vals.Get(1 + n%(vals.Len()-1)).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(-100 - n))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(-1<<40 - n))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(100 + n))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(1<<40 + n))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(n) + 0.5)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(float64(n) + 0.5)
	}
	panic(fmt.Sprintf("fillValue: kind %v of %s", fd.Kind(), fd.FullName()))
}

// TestResponsesGiveBackConfigs runs each recordCase and checks that
// PodSandboxStatus, ListPodSandbox, ContainerStatus, ListContainers, the
// stats, and the statuses of events give back exactly what the configs
// said; ContainerStatus also after UpdateContainerResources and after
// the image was removed.
func TestResponsesGiveBackConfigs(t *testing.T) {
	for _, tc := range recordCases() {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			clk := newFakeClock()
			rt := newRuntime(t, Options{Clock: clk, RuntimeHandlers: []string{"runsc"}})
			pull(t, ctx, rt, "busybox")
			img, err := rt.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "busybox"}})
			noErr(t, err, "ImageStatus")
			events := rt.events.subscribe()
			t.Cleanup(func() { rt.events.unsubscribe(events) })
			// The runtime gets copies: whatever it keeps is its own.
			sbCfg, cfg := proto.Clone(tc.sb).(*runtimeapi.PodSandboxConfig), proto.Clone(tc.c).(*runtimeapi.ContainerConfig)
			sbResp, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbCfg, RuntimeHandler: tc.handler})
			noErr(t, err, "RunPodSandbox")
			sbID := sbResp.PodSandboxId
			createSbCfg := proto.Clone(tc.sb).(*runtimeapi.PodSandboxConfig)
			if tc.logDir != "" {
				createSbCfg.LogDirectory = tc.logDir
			}
			cResp, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sbID, Config: cfg, SandboxConfig: createSbCfg})
			noErr(t, err, "CreateContainer")
			id := cResp.ContainerId
			now := clk.Now().UnixNano()

			ns := proto.Clone(tc.sb.GetLinux().GetSecurityContext().GetNamespaceOptions()).(*runtimeapi.NamespaceOption)
			if ns == nil {
				ns = &runtimeapi.NamespaceOption{}
			}
			sbStatus := sandboxStatus(t, ctx, rt, sbID).Status
			wantSandbox := &runtimeapi.PodSandboxStatus{
				Id: sbID, Metadata: tc.sb.Metadata, State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: now,
				Network:        &runtimeapi.PodSandboxNetworkStatus{Ip: sbStatus.GetNetwork().GetIp()},
				Linux:          &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: ns}},
				Labels:         tc.sb.Labels,
				Annotations:    tc.sb.Annotations,
				RuntimeHandler: tc.handler,
			}
			wantEqual(t, "PodSandboxStatus", sbStatus, wantSandbox)
			list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
			noErr(t, err, "ListPodSandbox")
			wantEqual(t, "ListPodSandbox", &runtimeapi.ListPodSandboxResponse{Items: list.Items}, &runtimeapi.ListPodSandboxResponse{Items: []*runtimeapi.PodSandbox{{
				Id: sbID, Metadata: tc.sb.Metadata, State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: now,
				Labels: tc.sb.Labels, Annotations: tc.sb.Annotations, RuntimeHandler: tc.handler,
			}}})

			wantStatus := &runtimeapi.ContainerStatus{
				Id: id, Metadata: tc.c.Metadata, State: runtimeapi.ContainerState_CONTAINER_CREATED, CreatedAt: now,
				Image: &runtimeapi.ImageSpec{
					Image: img.Image.RepoTags[0], Annotations: tc.c.Image.Annotations,
					UserSpecifiedImage: tc.c.Image.UserSpecifiedImage, RuntimeHandler: tc.c.Image.RuntimeHandler,
				},
				ImageRef:    img.Image.RepoDigests[0],
				ImageId:     img.Image.Id,
				Labels:      tc.c.Labels,
				Annotations: tc.c.Annotations,
				Mounts:      tc.c.Mounts,
				StopSignal:  tc.c.StopSignal,
			}
			if tc.c.LogPath != "" && createSbCfg.LogDirectory != "" {
				wantStatus.LogPath = filepath.Join(createSbCfg.LogDirectory, tc.c.LogPath)
			}
			if r := tc.c.GetLinux().GetResources(); r != nil {
				wantStatus.Resources = &runtimeapi.ContainerResources{Linux: r}
			}
			if sc := tc.c.GetLinux().GetSecurityContext(); sc.GetRunAsUser() != nil {
				wantStatus.User = &runtimeapi.ContainerUser{Linux: &runtimeapi.LinuxContainerUser{
					Uid: sc.RunAsUser.Value, Gid: sc.GetRunAsGroup().GetValue(), SupplementalGroups: sc.SupplementalGroups,
				}}
			}
			wantEqual(t, "ContainerStatus", containerStatus(t, ctx, rt, id), wantStatus)
			wantList := &runtimeapi.ListContainersResponse{Containers: []*runtimeapi.Container{{
				Id: id, PodSandboxId: sbID, Metadata: tc.c.Metadata, Image: tc.c.Image, ImageRef: img.Image.Id,
				State: runtimeapi.ContainerState_CONTAINER_CREATED, CreatedAt: now,
				Labels: tc.c.Labels, Annotations: tc.c.Annotations, ImageId: img.Image.Id,
			}}}
			clist, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
			noErr(t, err, "ListContainers")
			wantEqual(t, "ListContainers", clist, wantList)

			// The events of RunPodSandbox and CreateContainer carry the same.
			events.mu.Lock()
			queued := events.queue
			events.mu.Unlock()
			if len(queued) != 3 || queued[2].ContainerEventType != runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT {
				t.Fatalf("events queued: %v, want the sandbox's two and CONTAINER_CREATED_EVENT", queued)
			}
			ev := queued[2]
			wantEqual(t, "CONTAINER_CREATED_EVENT's sandbox status", ev.PodSandboxStatus, wantSandbox)
			if len(ev.ContainersStatuses) != 1 {
				t.Fatalf("CONTAINER_CREATED_EVENT has %d container statuses, want 1", len(ev.ContainersStatuses))
			}
			wantEqual(t, "CONTAINER_CREATED_EVENT's container status", ev.ContainersStatuses[0], wantStatus)

			startContainer(t, ctx, rt, id)
			wantStatus.State, wantStatus.StartedAt = runtimeapi.ContainerState_CONTAINER_RUNNING, now
			cstats, err := rt.ContainerStats(ctx, &runtimeapi.ContainerStatsRequest{ContainerId: id})
			noErr(t, err, "ContainerStats")
			wantEqual(t, "ContainerStats attributes", cstats.Stats.Attributes, &runtimeapi.ContainerAttributes{
				Id: id, Metadata: tc.c.Metadata, Labels: tc.c.Labels, Annotations: tc.c.Annotations,
			})
			sbStats, err := rt.PodSandboxStats(ctx, &runtimeapi.PodSandboxStatsRequest{PodSandboxId: sbID})
			noErr(t, err, "PodSandboxStats")
			wantEqual(t, "PodSandboxStats attributes", sbStats.Stats.Attributes, &runtimeapi.PodSandboxAttributes{
				Id: sbID, Metadata: tc.sb.Metadata, Labels: tc.sb.Labels, Annotations: tc.sb.Annotations,
			})

			// Resources as updated, each of the cases' in turn.
			for _, u := range recordCases() {
				res := u.c.GetLinux().GetResources()
				if res == nil {
					continue
				}
				_, err := rt.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{ContainerId: id, Linux: proto.Clone(res).(*runtimeapi.LinuxContainerResources)})
				noErr(t, err, "UpdateContainerResources")
				wantStatus.Resources = &runtimeapi.ContainerResources{Linux: res}
				wantEqual(t, "ContainerStatus after UpdateContainerResources of case "+u.name, containerStatus(t, ctx, rt, id), wantStatus)
			}

			// Without the image, the status has the spec as given.
			_, err = rt.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: img.Image.Id}})
			noErr(t, err, "RemoveImage")
			wantStatus.Image, wantStatus.ImageRef = tc.c.Image, img.Image.Id
			wantEqual(t, "ContainerStatus without the image", containerStatus(t, ctx, rt, id), wantStatus)
		})
	}
}

// wantEqual fails the test unless got and want are proto.Equal.
func wantEqual(t *testing.T, what string, got, want proto.Message) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Fatalf("%s:\n got %v\nwant %v", what, got, want)
	}
}

package sim

import (
	"errors"
	mbits "math/bits"
	"net/netip"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"pgregory.net/rapid"
)

// TestPodIPAllocation: unique usable addresses, ResourceExhausted when
// full, release on stop, hostNetwork sandboxes get the host IP and take
// nothing from the pool.
func TestPodIPAllocation(t *testing.T) {
	ctx := ctxT(t)
	// 10.9.0.0/29: .0 network, .1 gateway, .7 broadcast: 5 usable.
	rt := newRuntime(t, Options{PodCIDR: "10.9.0.0/29", HostIP: "192.0.2.10"})
	c := serveUnix(t, rt)

	usable := map[string]bool{"10.9.0.2": true, "10.9.0.3": true, "10.9.0.4": true, "10.9.0.5": true, "10.9.0.6": true}
	seen := map[string]string{}
	var ids []string
	for i := range 5 {
		resp, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "uid-"+string(rune('a'+i)), 0)})
		noErr(t, err, "RunPodSandbox")
		ip := sandboxStatus(t, ctx, rt, resp.PodSandboxId).Status.Network.Ip
		if !usable[ip] {
			t.Fatalf("sandbox %d got %q, not a usable address of 10.9.0.0/29", i, ip)
		}
		if other, dup := seen[ip]; dup {
			t.Fatalf("IP %s given to %s and %s", ip, other, resp.PodSandboxId)
		}
		seen[ip] = resp.PodSandboxId
		ids = append(ids, resp.PodSandboxId)
	}
	_, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "uid-full", 0)})
	wantCode(t, err, codes.ResourceExhausted, "RunPodSandbox with the pool full")
	_, err = rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "uid-full", 0)})
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("direct RunPodSandbox with the pool full: %v, want ErrExhausted", err)
	}

	// Host network: the host IP, even with the pool full.
	hn, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: hostNetwork(podConfig("h", "uid-host", 0))})
	noErr(t, err, "RunPodSandbox hostNetwork")
	hs := sandboxStatus(t, ctx, rt, hn.PodSandboxId).Status
	if hs.Network.Ip != "192.0.2.10" || hs.Linux.Namespaces.Options.Network != runtimeapi.NamespaceMode_NODE {
		t.Fatalf("hostNetwork sandbox status = %v", hs)
	}

	// StopPodSandbox returns the address; the status still shows it.
	freed := sandboxStatus(t, ctx, rt, ids[2]).Status.Network.Ip
	_, err = c.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: ids[2]})
	noErr(t, err, "StopPodSandbox")
	if got := sandboxStatus(t, ctx, rt, ids[2]).Status.Network.Ip; got != freed {
		t.Errorf("stopped sandbox reports IP %q, want %q", got, freed)
	}
	resp, err := c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "uid-next", 0)})
	noErr(t, err, "RunPodSandbox after a stop")
	if got := sandboxStatus(t, ctx, rt, resp.PodSandboxId).Status.Network.Ip; got != freed {
		t.Errorf("new sandbox got %q, want the freed %q", got, freed)
	}
	// Stopping the host-network sandbox frees nothing from the pool.
	_, err = c.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: hn.PodSandboxId})
	noErr(t, err, "StopPodSandbox hostNetwork")
	_, err = c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "uid-full2", 0)})
	wantCode(t, err, codes.ResourceExhausted, "RunPodSandbox with the pool full again")

	// Removing (without an explicit stop) releases too.
	_, err = c.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: ids[0]})
	noErr(t, err, "RemovePodSandbox")
	if in := rt.Info(); in.PodIPsInUse != 4 {
		t.Fatalf("PodIPsInUse = %d, want 4", in.PodIPsInUse)
	}
	_, err = c.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podConfig("p", "uid-full2", 0)})
	noErr(t, err, "RunPodSandbox after a remove")
}

func TestIPAMNextFitAndIPv6(t *testing.T) {
	p, err := newIPAM(netip.MustParsePrefix("10.0.0.0/30")) // one usable: .2
	noErr(t, err, "newIPAM")
	a := mustAlloc(t, p)
	if a != netip.MustParseAddr("10.0.0.2") {
		t.Fatalf("allocated %v", a)
	}
	if _, err := p.allocate(); !errors.Is(err, ErrExhausted) {
		t.Fatalf("second allocation: %v", err)
	}
	p.release(a)
	if b := mustAlloc(t, p); b != a {
		t.Fatalf("after release allocated %v", b)
	}

	// Next fit: a released address is not reused while others are free.
	p, _ = newIPAM(netip.MustParsePrefix("10.1.0.0/24"))
	first := mustAlloc(t, p)
	p.release(first)
	if second := mustAlloc(t, p); second == first {
		t.Fatalf("released %v handed out again at once", first)
	}

	// IPv6: no broadcast, carries across bytes.
	p, _ = newIPAM(netip.MustParsePrefix("fd00::/64"))
	if a := mustAlloc(t, p); a != netip.MustParseAddr("fd00::2") {
		t.Fatalf("IPv6 allocated %v", a)
	}
	if got := addrAdd(netip.MustParseAddr("10.0.0.255"), 2); got != netip.MustParseAddr("10.0.1.1") {
		t.Fatalf("addrAdd carry = %v", got)
	}
	for _, cidr := range []string{"10.0.0.0/31", "10.0.0.1/32", "fd00::/127"} {
		if _, err := newIPAM(netip.MustParsePrefix(cidr)); err == nil {
			t.Errorf("newIPAM(%s) accepted a pool without usable addresses", cidr)
		}
	}
	if _, err := New(Options{PodCIDR: "10.0.0.0/33"}); err == nil {
		t.Errorf("New accepted an invalid pod CIDR")
	}
}

func mustAlloc(t *testing.T, p *ipam) netip.Addr {
	t.Helper()
	a, err := p.allocate()
	noErr(t, err, "allocate")
	return a
}

// TestUpdateRuntimeConfigPodCIDR: later sandboxes use the new CIDR.
func TestUpdateRuntimeConfigPodCIDR(t *testing.T) {
	ctx := ctxT(t)
	rt := newRuntime(t, Options{})
	_, err := rt.UpdateRuntimeConfig(ctx, &runtimeapi.UpdateRuntimeConfigRequest{RuntimeConfig: &runtimeapi.RuntimeConfig{
		NetworkConfig: &runtimeapi.NetworkConfig{PodCidr: "10.244.3.0/24"}}})
	noErr(t, err, "UpdateRuntimeConfig")
	sb := runPod(t, ctx, rt, podConfig("p", "u", 0))
	ip := netip.MustParseAddr(sandboxStatus(t, ctx, rt, sb).Status.Network.Ip)
	if !netip.MustParsePrefix("10.244.3.0/24").Contains(ip) {
		t.Fatalf("IP %v not from the updated CIDR", ip)
	}
	_, err = rt.UpdateRuntimeConfig(ctx, &runtimeapi.UpdateRuntimeConfigRequest{RuntimeConfig: &runtimeapi.RuntimeConfig{
		NetworkConfig: &runtimeapi.NetworkConfig{PodCidr: "bogus"}}})
	wantCode(t, err, codes.InvalidArgument, "UpdateRuntimeConfig with a bad CIDR")
}

// The pages of used addresses agree with a set of addresses through
// random allocations, releases and prefix changes, over page boundaries,
// for IPv4 and IPv6; emptied pages go.
func TestIPAMPagesAgreeWithASet(t *testing.T) {
	prefixes := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/19"), // two pages
		netip.MustParsePrefix("10.0.15.0/24"),
		netip.MustParsePrefix("fd00::/115"),
		netip.MustParsePrefix("::ffff:10.0.0.0/115"), // v4-mapped: not the IPv4 addresses
	}
	rapid.Check(t, func(t *rapid.T) {
		p, err := newIPAM(prefixes[0])
		if err != nil {
			t.Fatal(err)
		}
		set := map[netip.Addr]bool{}
		var held []netip.Addr
		t.Repeat(map[string]func(*rapid.T){
			"allocate": func(t *rapid.T) {
				for range rapid.IntRange(1, 3000).Draw(t, "n") {
					a, err := p.allocate()
					if err != nil {
						return // full
					}
					if set[a] {
						t.Fatalf("%v handed out twice", a)
					}
					set[a] = true
					held = append(held, a)
				}
			},
			"release": func(t *rapid.T) {
				if len(held) == 0 {
					t.Skip("none held")
				}
				i := rapid.IntRange(0, len(held)-1).Draw(t, "i")
				for _, a := range held[i:] {
					p.release(a)
					delete(set, a)
				}
				held = held[:i]
			},
			"releaseAny": func(t *rapid.T) {
				p.release(netip.MustParseAddr("10.0.31.250"))
				delete(set, netip.MustParseAddr("10.0.31.250"))
				held = slices.DeleteFunc(held, func(a netip.Addr) bool { return !set[a] })
			},
			"reset": func(t *rapid.T) {
				if err := p.reset(rapid.SampledFrom(prefixes).Draw(t, "prefix")); err != nil {
					t.Fatal(err)
				}
			},
			"": func(t *rapid.T) {
				if p.inUse() != len(set) {
					t.Fatalf("%d in use, want %d", p.inUse(), len(set))
				}
				for a := range set {
					if !holds(p, a) {
						t.Fatalf("%v not in use", a)
					}
					// Neither its neighbours nor its IPv4/IPv4-mapped twin
					// are, unless handed out.
					for _, b := range []netip.Addr{a.Next(), a.Prev(), a.Unmap(), netip.AddrFrom16(a.As16())} {
						if b.IsValid() && !set[b] && holds(p, b) {
							t.Fatalf("%v in use with %v, never handed out", b, a)
						}
					}
				}
				bits := 0
				for pg, words := range p.used {
					if *words == ([ipPageWords]uint64{}) {
						t.Fatalf("empty page %v kept", pg)
					}
					for _, w := range words {
						bits += mbits.OnesCount64(w)
					}
				}
				if bits != len(set) {
					t.Fatalf("%d bits set, want %d", bits, len(set))
				}
			},
		})
	})
}

// holds reports whether p has a in use.
func holds(p *ipam, a netip.Addr) bool {
	pg, bit := ipBit(a)
	return bitSet(p.used[pg], bit)
}

package sim

import (
	"fmt"
	"net/netip"
)

// ipam hands out pod IPs from one prefix, next-fit: the cursor moves on
// after every allocation, so a released address is reused only after the
// rest of the pool was used (as host-local IPAM does), which keeps
// stale-IP bugs in clients visible. Not safe for concurrent use; the
// Runtime's mutex guards it.
type ipam struct {
	prefix netip.Prefix
	first  uint64 // offset of the first usable address
	size   uint64 // number of usable addresses
	cursor uint64 // next offset to try, relative to first
	used   map[netip.Addr]struct{}
}

// maxPoolSize bounds the pool of huge (IPv6) prefixes; it is never reached.
const maxPoolSize = 1 << 32

func newIPAM(prefix netip.Prefix) (*ipam, error) {
	p := &ipam{used: make(map[netip.Addr]struct{})}
	if err := p.reset(prefix); err != nil {
		return nil, err
	}
	return p, nil
}

// reset makes later allocations come from prefix. Addresses handed out
// from an earlier prefix stay reserved until released.
func (p *ipam) reset(prefix netip.Prefix) error {
	prefix = prefix.Masked()
	hostBits := prefix.Addr().BitLen() - prefix.Bits()
	var total uint64 = maxPoolSize
	if hostBits < 32 {
		total = 1 << hostBits
	}
	// Skip the network address and the gateway; IPv4 also the broadcast.
	skipEnd := uint64(0)
	if prefix.Addr().Is4() {
		skipEnd = 1
	}
	if total <= 2+skipEnd {
		return fmt.Errorf("sim: pod CIDR %s has no usable address", prefix)
	}
	p.prefix, p.first, p.size, p.cursor = prefix, 2, total-2-skipEnd, 0
	return nil
}

// allocate returns a free address, or ErrExhausted.
func (p *ipam) allocate() (netip.Addr, error) {
	for i := uint64(0); i < p.size; i++ {
		off := (p.cursor + i) % p.size
		a := addrAdd(p.prefix.Addr(), p.first+off)
		if _, taken := p.used[a]; !taken {
			p.used[a] = struct{}{}
			p.cursor = (off + 1) % p.size
			return a, nil
		}
	}
	return netip.Addr{}, newErr(ErrExhausted, "pod CIDR %s: all %d addresses in use", p.prefix, p.size)
}

// release frees a; releasing a free address is a no-op.
func (p *ipam) release(a netip.Addr) { delete(p.used, a) }

// inUse is the number of allocated addresses.
func (p *ipam) inUse() int { return len(p.used) }

// addrAdd returns base+off, treating the address as a big-endian integer.
func addrAdd(base netip.Addr, off uint64) netip.Addr {
	b := base.As16()
	carry := off
	for i := 15; i >= 0 && carry > 0; i-- {
		sum := uint64(b[i]) + carry&0xff
		b[i] = byte(sum)
		carry = carry>>8 + sum>>8
	}
	a := netip.AddrFrom16(b)
	if base.Is4() {
		a = a.Unmap()
	}
	return a
}

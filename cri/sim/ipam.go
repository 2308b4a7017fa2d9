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
//
// Addresses in use are bits of pages of 4,096 addresses, kept while one
// of theirs is in use: with next-fit, a node's pods take few pages, and
// an address costs a bit, not a map entry.
type ipam struct {
	prefix netip.Prefix
	first  uint64 // offset of the first usable address
	size   uint64 // number of usable addresses
	cursor uint64 // next offset to try, relative to first
	used   map[ipPage]*[ipPageWords]uint64
	n      int // addresses in use
}

// ipPage is an address without its last ipPageBits bits: a page.
type ipPage struct {
	hi  [16]byte
	is4 bool // an IPv4 address, not one mapped into IPv6
}

const (
	ipPageBits  = 12
	ipPageWords = 1 << ipPageBits / 64
)

// ipBit is a's page and the number of its bit there.
func ipBit(a netip.Addr) (ipPage, uint) {
	b := a.As16()
	bit := uint(b[14]&0x0f)<<8 | uint(b[15])
	b[14], b[15] = b[14]&0xf0, 0
	return ipPage{hi: b, is4: a.Is4()}, bit
}

// bitSet reports whether bit is set in words (nil: a page not kept).
func bitSet(words *[ipPageWords]uint64, bit uint) bool {
	return words != nil && words[bit/64]&(1<<(bit%64)) != 0
}

// maxPoolSize bounds the pool of huge (IPv6) prefixes; it is never reached.
const maxPoolSize = 1 << 32

func newIPAM(prefix netip.Prefix) (*ipam, error) {
	p := &ipam{used: make(map[ipPage]*[ipPageWords]uint64)}
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
		pg, bit := ipBit(a)
		if words := p.used[pg]; !bitSet(words, bit) {
			if words == nil {
				words = new([ipPageWords]uint64)
				p.used[pg] = words
			}
			words[bit/64] |= 1 << (bit % 64)
			p.n++
			p.cursor = (off + 1) % p.size
			return a, nil
		}
	}
	return netip.Addr{}, newErr(ErrExhausted, "pod CIDR %s: all %d addresses in use", p.prefix, p.size)
}

// release frees a; releasing a free address is a no-op.
func (p *ipam) release(a netip.Addr) {
	pg, bit := ipBit(a)
	words := p.used[pg]
	if !bitSet(words, bit) {
		return
	}
	words[bit/64] &^= 1 << (bit % 64)
	p.n--
	if *words == ([ipPageWords]uint64{}) {
		delete(p.used, pg)
	}
}

// inUse is the number of allocated addresses.
func (p *ipam) inUse() int { return p.n }

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

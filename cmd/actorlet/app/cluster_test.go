package app

import (
	"net"
	"path/filepath"
	"testing"
)

func TestMachineDescribesTheHost(t *testing.T) {
	m := machine("node-1", []net.IP{net.IPv4(127, 0, 0, 1)}, 50, filepath.Join(t.TempDir(), "not", "yet"))
	if m.Capacity.Pods().Value() != 50 || m.Capacity.Cpu().Value() < 1 || m.Capacity.Memory().Value() <= 0 ||
		m.Capacity.StorageEphemeral().Value() <= 0 || !m.Allocatable.StorageEphemeral().Equal(*m.Capacity.StorageEphemeral()) {
		t.Fatalf("capacity %v", m.Capacity)
	}
	if m.Addresses[0].Address != "127.0.0.1" || m.Addresses[1].Address != "node-1" || m.Info.KernelVersion == "" {
		t.Fatalf("addresses %v info %+v", m.Addresses, m.Info)
	}
}

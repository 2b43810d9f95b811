package plugins

import "context"

// Inventory is what inspection learns about a node: Ironic's node properties
// (cpus, cpu_arch, memory_mb, local_gb) and the NICs that become ports.
type Inventory struct {
	CPUs     int
	CPUArch  string
	MemoryMB int64
	LocalGB  int64
	NICs     []NIC
}

// NIC is a network interface found by inspection.
type NIC struct {
	// Name is the BMC's or OS's name for the interface, if known.
	Name string
	// MACAddress is lower case, colon separated ("52:54:00:12:34:56").
	MACAddress string
}

// Inspector is the "inspect" hardware interface: it reads a node's hardware
// inventory out of band, without changing the node's power state.
type Inspector interface {
	Inspect(ctx context.Context, node Node) (Inventory, error)
}

package redfish

import (
	"cmp"
	"context"
	"net"
	"slices"
	"strings"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/rivetmetal/rivet/plugins"
)

// gib is a gibibyte in bytes.
const gib = 1 << 30

// Inspect implements plugins.Inspector, reading the system out of band as
// Ironic's redfish inspect interface does:
//   - cpus: the logical CPUs, the sum of the processors' TotalThreads
//     (ProcessorSummary.LogicalProcessorCount, then Count, when the
//     processors do not say);
//   - cpu_arch: from the first CPU's InstructionSet (x86-64 → x86_64,
//     ARM-A64 → aarch64, …);
//   - memory_mb: MemorySummary.TotalSystemMemoryGiB × 1024, or the sum of
//     the DIMMs' CapacityMiB;
//   - local_gb: the root disk, taken as the LARGEST drive (Storage drives,
//     else SimpleStorage devices), in whole GiB minus one (Ironic leaves a
//     GiB for partitioning), 0 without disks;
//   - NICs: each EthernetInterface with a valid MAC, lower-cased, in
//     order of name.
//
// It never changes the power state.
func (d *Driver) Inspect(ctx context.Context, node plugins.Node) (plugins.Inventory, error) {
	var inv plugins.Inventory
	err := d.call(ctx, node, "inspect", func(t target) error {
		sys, err := t.system()
		if err != nil {
			return err
		}
		if inv.CPUs, inv.CPUArch, err = cpus(sys); err != nil {
			return err
		}
		if inv.MemoryMB, err = memoryMB(sys); err != nil {
			return err
		}
		largest, err := largestDisk(sys)
		if err != nil {
			return err
		}
		inv.LocalGB = max(0, largest/gib-1)
		inv.NICs, err = nics(sys)
		return err
	})
	return inv, err
}

// archs maps Redfish instruction sets to Ironic's cpu_arch values.
var archs = map[schemas.InstructionSet]string{
	schemas.X8664InstructionSet:  "x86_64",
	schemas.X86InstructionSet:    "i686",
	schemas.ARMA64InstructionSet: "aarch64",
	schemas.ARMA32InstructionSet: "armv7l",
	"IA-64":                      "ia64",
	"PowerISA":                   "ppc64le",
	"MIPS64":                     "mips64",
	"RV64":                       "riscv64",
}

func cpus(sys *schemas.ComputerSystem) (int, string, error) {
	procs, err := sys.Processors()
	if err != nil {
		return 0, "", err
	}
	count, arch := 0, ""
	for _, p := range procs {
		if p.ProcessorType != "" && p.ProcessorType != schemas.CPUProcessorType {
			continue
		}
		count += gofish.Deref(p.TotalThreads)
		if arch == "" {
			arch = archs[p.InstructionSet]
			if arch == "" && p.ProcessorArchitecture == schemas.X86ProcessorArchitecture {
				arch = "x86_64"
			}
		}
	}
	if count == 0 {
		count = int(gofish.Deref(sys.ProcessorSummary.LogicalProcessorCount))
	}
	if count == 0 {
		count = int(gofish.Deref(sys.ProcessorSummary.Count))
	}
	return count, arch, nil
}

func memoryMB(sys *schemas.ComputerSystem) (int64, error) {
	if gib := gofish.Deref(sys.MemorySummary.TotalSystemMemoryGiB); gib > 0 {
		return int64(gib * 1024), nil
	}
	dimms, err := sys.Memory()
	if err != nil {
		return 0, err
	}
	var mib int64
	for _, m := range dimms {
		mib += int64(gofish.Deref(m.CapacityMiB))
	}
	return mib, nil
}

func largestDisk(sys *schemas.ComputerSystem) (int64, error) {
	var largest int64
	storage, err := sys.Storage()
	if err != nil {
		return 0, err
	}
	for _, s := range storage {
		drives, err := s.Drives()
		if err != nil {
			return 0, err
		}
		for _, dr := range drives {
			largest = max(largest, int64(gofish.Deref(dr.CapacityBytes)))
		}
	}
	if largest > 0 {
		return largest, nil
	}
	simple, err := sys.SimpleStorage()
	if err != nil {
		return 0, err
	}
	for _, s := range simple {
		for _, dev := range s.Devices {
			largest = max(largest, int64(gofish.Deref(dev.CapacityBytes)))
		}
	}
	return largest, nil
}

func nics(sys *schemas.ComputerSystem) ([]plugins.NIC, error) {
	ifaces, err := sys.EthernetInterfaces()
	if err != nil {
		return nil, err
	}
	var out []plugins.NIC
	for _, e := range ifaces {
		mac := e.MACAddress
		if mac == "" {
			mac = e.PermanentMACAddress
		}
		hw, err := net.ParseMAC(strings.ReplaceAll(mac, "-", ":"))
		if err != nil || len(hw) != 6 {
			continue
		}
		out = append(out, plugins.NIC{Name: e.ID, MACAddress: hw.String()})
	}
	// gofish reads collection members concurrently: order them.
	slices.SortFunc(out, func(a, b plugins.NIC) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.MACAddress, b.MACAddress))
	})
	return out, nil
}

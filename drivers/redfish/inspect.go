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
//   - cpus: the logical CPUs: ProcessorSummary.LogicalProcessorCount, else
//     the sum of the processors' TotalThreads, else ProcessorSummary.Count;
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
// Only the System itself is required. Every sub-resource is optional: a
// BMC that links a collection it then answers 404 (or 500) for loses what
// that collection alone knows, logged as a warning, not the inspection. A
// BMC that stops answering, or refuses the credentials, still fails it.
// It never changes the power state.
func (d *Driver) Inspect(ctx context.Context, node plugins.Node) (plugins.Inventory, error) {
	var inv plugins.Inventory
	err := d.call(ctx, node, "inspect", func(t target) error {
		sys, err := t.system()
		if err != nil {
			return err
		}
		var fatal error // the BMC stopped answering, or the caller gave up
		skip := func(what string, err error) {
			switch classify(ctx, err) {
			case failNone:
			case failNoAnswer, failCaller, failQueue, failAuth:
				fatal = cmp.Or(fatal, err)
			default:
				t.logger.Warn("inspection: sub-resource unreadable; skipped", "resource", what, "error", scrub(err.Error(), t.ni.secrets))
			}
		}
		var perr error
		inv.CPUs, inv.CPUArch, perr = cpus(sys)
		skip("Processors", perr)
		var merr error
		inv.MemoryMB, merr = memoryMB(sys)
		skip("Memory", merr)
		largest, serrs := largestDisk(sys)
		for _, e := range serrs {
			skip("Storage", e)
		}
		inv.LocalGB = max(0, largest/gib-1)
		var nerr error
		inv.NICs, nerr = nics(sys)
		skip("EthernetInterfaces", nerr)
		return fatal
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

// cpus reads the count from ProcessorSummary when it has it and the
// processors for the architecture; their error is returned beside what
// could be found without them.
func cpus(sys *schemas.ComputerSystem) (int, string, error) {
	count, arch := 0, ""
	procs, err := sys.Processors()
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
	if n := int(gofish.Deref(sys.ProcessorSummary.LogicalProcessorCount)); n > 0 {
		count = n
	}
	if count == 0 {
		count = int(gofish.Deref(sys.ProcessorSummary.Count))
	}
	return count, arch, err
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

// largestDisk returns the largest drive found and the errors met on the
// way; a Storage collection that fails leaves SimpleStorage to answer.
func largestDisk(sys *schemas.ComputerSystem) (int64, []error) {
	var largest int64
	var errs []error
	storage, err := sys.Storage()
	if err != nil {
		errs = append(errs, err)
	}
	for _, s := range storage {
		drives, err := s.Drives()
		if err != nil {
			errs = append(errs, err)
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
		return 0, append(errs, err)
	}
	for _, s := range simple {
		for _, dev := range s.Devices {
			largest = max(largest, int64(gofish.Deref(dev.CapacityBytes)))
		}
	}
	if largest > 0 {
		return largest, nil
	}
	return 0, errs
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

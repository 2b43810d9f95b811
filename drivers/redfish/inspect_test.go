package redfish_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/plugins"
)

type link struct {
	ID string `json:"@odata.id"`
}

// expectedInventory reads the simulator's resources with plain HTTP (not
// gofish) and computes what Inspect must report: threads, x86_64, memory
// summary, largest drive in GiB minus one, NIC MACs.
func expectedInventory(t *testing.T, b *bmcSim, id string) plugins.Inventory {
	t.Helper()
	base := "/redfish/v1/Systems/" + id
	var inv plugins.Inventory
	var sys struct {
		MemorySummary struct{ TotalSystemMemoryGiB float64 }
	}
	b.raw(t, "GET", base, nil, &sys)
	inv.MemoryMB = int64(sys.MemorySummary.TotalSystemMemoryGiB * 1024)
	var coll struct{ Members []link }
	b.raw(t, "GET", base+"/Processors", nil, &coll)
	for _, m := range coll.Members {
		var p struct {
			TotalThreads   int
			InstructionSet string
		}
		b.raw(t, "GET", m.ID, nil, &p)
		inv.CPUs += p.TotalThreads
		if p.InstructionSet == "x86-64" {
			inv.CPUArch = "x86_64"
		}
	}
	var storage struct{ Drives []link }
	b.raw(t, "GET", base+"/Storage/1", nil, &storage)
	var largest int64
	for _, l := range storage.Drives {
		var dr struct{ CapacityBytes int64 }
		b.raw(t, "GET", l.ID, nil, &dr)
		largest = max(largest, dr.CapacityBytes)
	}
	inv.LocalGB = largest/(1<<30) - 1
	b.raw(t, "GET", base+"/EthernetInterfaces", nil, &coll)
	for _, m := range coll.Members {
		var e struct{ Id, MACAddress string }
		b.raw(t, "GET", m.ID, nil, &e)
		inv.NICs = append(inv.NICs, plugins.NIC{Name: e.Id, MACAddress: strings.ToLower(e.MACAddress)})
	}
	return inv
}

// TestInspect compares the driver's inventory with the simulator's for
// several differently built systems, and checks inspection leaves power
// alone.
func TestInspect(t *testing.T) {
	b := startSim(t, sim.Options{Systems: 4, Seed: 42})
	d := newDriver(t, testOptions())
	for i := range 4 {
		id := fmt.Sprintf("node-%d", i)
		t.Run(id, func(t *testing.T) {
			want := expectedInventory(t, b, id)
			if want.CPUs == 0 || want.MemoryMB == 0 || want.LocalGB <= 0 || len(want.NICs) == 0 {
				t.Fatalf("the simulator's inventory is empty: %+v", want)
			}
			got, err := d.Inspect(ctx(t), node(b, id))
			must(t, "inspect", err)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("inventory (-want +got):\n%s", diff)
			}
			if st := b.state(t, id); st.PowerState != sim.PowerOff || st.Resets != 0 {
				t.Errorf("inspection changed power: %+v", st)
			}
		})
	}
}

// TestInspectMissingCollection: a System that links a sub-collection the
// BMC answers 404 for is still inspected: what the summaries and the other
// collections say is reported, and only what the missing one alone knows
// is left out.
func TestInspectMissingCollection(t *testing.T) {
	full := startSim(t, sim.Options{Seed: 42})
	all := expectedInventory(t, full, "node-0")
	tests := map[string]func(inv *plugins.Inventory){
		"Memory":             func(*plugins.Inventory) {}, // MemorySummary has it
		"Processors":         func(inv *plugins.Inventory) { inv.CPUArch = "" },
		"Storage":            func(*plugins.Inventory) {}, // SimpleStorage has the same disks
		"SimpleStorage":      func(*plugins.Inventory) {},
		"EthernetInterfaces": func(inv *plugins.Inventory) { inv.NICs = nil },
	}
	d := newDriver(t, testOptions())
	for missing, edit := range tests {
		t.Run(missing, func(t *testing.T) {
			b := startSim(t, sim.Options{Seed: 42, Quirks: sim.Quirks{MissingCollections: []string{missing}}})
			want := all
			edit(&want)
			got, err := d.Inspect(ctx(t), node(b, "node-0"))
			must(t, "inspect", err)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("inventory (-want +got):\n%s", diff)
			}
		})
	}
}

package redfish_test

import (
	"cmp"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/rivetmetal/rivet/plugins"
)

// inventory is what Ironic's redfish inspection reads for sysPath, taken
// from the mockup's files: logical CPUs (ProcessorSummary, else the CPUs'
// TotalThreads), the first CPU's architecture, MemorySummary, the largest
// drive in GiB minus one, the NICs' MACs by Id.
func (m *mockupBMC) inventory(t *testing.T, sysPath string) plugins.Inventory {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	sys := m.res[sysPath]
	num := func(v any) int64 { n, _ := v.(json.Number); i, _ := n.Int64(); return i }
	var inv plugins.Inventory
	inv.MemoryMB = num(lookup(sys, "MemorySummary", "TotalSystemMemoryGiB")) * 1024
	var threads int64
	for _, p := range m.members(lookup(sys, "Processors")) {
		if pt, _ := p["ProcessorType"].(string); pt != "" && pt != "CPU" {
			continue
		}
		threads += num(p["TotalThreads"])
		if inv.CPUArch == "" && p["InstructionSet"] == "x86-64" {
			inv.CPUArch = "x86_64"
		}
	}
	inv.CPUs = int(cmp.Or(num(lookup(sys, "ProcessorSummary", "LogicalProcessorCount")), threads, num(lookup(sys, "ProcessorSummary", "Count"))))
	var largest int64
	for _, s := range m.members(lookup(sys, "Storage")) {
		drives, _ := s["Drives"].([]any)
		for _, d := range drives {
			id, _ := lookup(map[string]any{"x": d}, "x", "@odata.id").(string)
			largest = max(largest, num(m.res[strings.TrimRight(id, "/")]["CapacityBytes"]))
		}
	}
	if largest == 0 {
		for _, s := range m.members(lookup(sys, "SimpleStorage")) {
			devs, _ := s["Devices"].([]any)
			for _, d := range devs {
				largest = max(largest, num(lookup(map[string]any{"x": d}, "x", "CapacityBytes")))
			}
		}
	}
	inv.LocalGB = max(0, largest/(1<<30)-1)
	for _, e := range m.members(lookup(sys, "EthernetInterfaces")) {
		mac, _ := e["MACAddress"].(string)
		if hw, err := net.ParseMAC(mac); err == nil && len(hw) == 6 {
			id, _ := e["Id"].(string)
			inv.NICs = append(inv.NICs, plugins.NIC{Name: id, MACAddress: hw.String()})
		}
	}
	slices.SortFunc(inv.NICs, func(a, b plugins.NIC) int { return strings.Compare(a.Name, b.Name) })
	return inv
}

// members reads a linked collection's members; the caller holds m.mu. A
// link to nothing is an empty collection, as the BMC's 404 leaves the
// driver with nothing either.
func (m *mockupBMC) members(link any) []map[string]any {
	id, _ := lookup(map[string]any{"x": link}, "x", "@odata.id").(string)
	coll := m.res[strings.TrimRight(id, "/")]
	list, _ := coll["Members"].([]any)
	var out []map[string]any
	for _, x := range list {
		p, _ := lookup(map[string]any{"x": x}, "x", "@odata.id").(string)
		if r, ok := m.res[strings.TrimRight(p, "/")]; ok {
			out = append(out, r)
		}
	}
	return out
}

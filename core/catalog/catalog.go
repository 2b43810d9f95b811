package catalog

import (
	"maps"
	"slices"
	"strings"
)

// Interface types, as Ironic names them.
const (
	Boot       = "boot"
	Console    = "console"
	Deploy     = "deploy"
	Inspect    = "inspect"
	Management = "management"
	Network    = "network"
	Power      = "power"
	RAID       = "raid"
	Vendor     = "vendor"
	// The interface types of API 1.33 (storage), 1.38 (rescue), 1.40
	// (bios) and 1.86 (firmware).
	Storage  = "storage"
	Rescue   = "rescue"
	BIOS     = "bios"
	Firmware = "firmware"
)

// types are the interface types the catalog covers: Ironic's standard
// interfaces at API 1.30, then those of later versions.
var types = []string{Boot, Console, Deploy, Inspect, Management, Network, Power, RAID, Vendor,
	Storage, Rescue, BIOS, Firmware}

// Types returns the interface types the catalog covers, in Ironic's order.
func Types() []string { return slices.Clone(types) }

// Types11 returns the interface types whose node fields Node 1.1 (release
// 0.2) added: what the backfill_node_interfaces migration fills. The
// types of later releases stay NULL in old rows, which reads as the
// hardware type's default.
func Types11() []string { return slices.Clone(types[:9]) }

// Field is the node field naming the implementation of iface:
// "<iface>_interface".
func Field(iface string) string { return iface + "_interface" }

// Impls are the implementations of one interface type a hardware type
// offers.
type Impls struct {
	// Enabled lists the implementation names, sorted.
	Enabled []string
	// Default is what a node that names none uses; "" when the hardware
	// type has no implementation of the interface.
	Default string
}

// Offer is one implementation offered for a hardware type: one
// conductor_hardware_interfaces row.
type Offer struct {
	HardwareType string
	Interface    string
	Name         string
	Default      bool
}

// Catalog maps a hardware type and an interface type to its
// implementations. The zero value is empty; a Catalog is read-only once
// built.
type Catalog struct {
	hw map[string]map[string]Impls
}

// New builds a catalog from offers, of one conductor or several: an
// interface's enabled implementations are the union of those offered, its
// default the one most offers mark default (ties: the first by name), since
// conductors of one deployment are expected to agree, as Ironic assumes.
func New(offers []Offer) *Catalog {
	type key struct{ hw, iface string }
	enabled := map[key]map[string]bool{}
	votes := map[key]map[string]int{}
	for _, o := range offers {
		if o.HardwareType == "" || o.Interface == "" || o.Name == "" {
			continue
		}
		k := key{o.HardwareType, o.Interface}
		if enabled[k] == nil {
			enabled[k], votes[k] = map[string]bool{}, map[string]int{}
		}
		enabled[k][o.Name] = true
		if o.Default {
			votes[k][o.Name]++
		}
	}
	c := &Catalog{hw: map[string]map[string]Impls{}}
	for k, names := range enabled {
		im := Impls{Enabled: slices.Sorted(maps.Keys(names))}
		best := 0
		for _, n := range im.Enabled {
			if v := votes[k][n]; v > best {
				im.Default, best = n, v
			}
		}
		if c.hw[k.hw] == nil {
			c.hw[k.hw] = map[string]Impls{}
		}
		c.hw[k.hw][k.iface] = im
	}
	return c
}

// HardwareTypes lists the hardware types the catalog knows, sorted.
func (c *Catalog) HardwareTypes() []string { return slices.Sorted(maps.Keys(c.hw)) }

// Has reports whether the catalog knows hardware type hw.
func (c *Catalog) Has(hw string) bool {
	_, ok := c.hw[hw]
	return ok
}

// Impls returns hw's implementations of iface (none for an unknown
// hardware type or interface).
func (c *Catalog) Impls(hw, iface string) Impls {
	im := c.hw[hw][iface]
	im.Enabled = slices.Clone(im.Enabled)
	return im
}

// Enabled lists every implementation of iface enabled for any hardware
// type, sorted: Ironic's "Valid interfaces" for an unknown name.
func (c *Catalog) Enabled(iface string) []string {
	set := map[string]bool{}
	for _, ifaces := range c.hw {
		for _, n := range ifaces[iface].Enabled {
			set[n] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// Offers returns the catalog as offers, by hardware type, interface type
// (in Types order) and name: what a conductor registers.
func (c *Catalog) Offers() []Offer {
	var out []Offer
	for _, hw := range c.HardwareTypes() {
		for _, iface := range c.interfaces(hw) {
			im := c.hw[hw][iface]
			for _, n := range im.Enabled {
				out = append(out, Offer{HardwareType: hw, Interface: iface, Name: n, Default: n == im.Default})
			}
		}
	}
	return out
}

// interfaces lists hw's interface types: Types order first, then any other
// (a newer conductor's) by name.
func (c *Catalog) interfaces(hw string) []string {
	return slices.SortedFunc(maps.Keys(c.hw[hw]), func(a, b string) int {
		ia, ib := slices.Index(types, a), slices.Index(types, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return strings.Compare(a, b)
	})
}

// Overlay returns a catalog holding c's entries, each (hardware type,
// interface type) that over has replaced by over's.
func (c *Catalog) Overlay(over *Catalog) *Catalog {
	out := &Catalog{hw: map[string]map[string]Impls{}}
	for _, src := range []*Catalog{c, over} {
		for hw, ifaces := range src.hw {
			if out.hw[hw] == nil {
				out.hw[hw] = map[string]Impls{}
			}
			maps.Copy(out.hw[hw], ifaces)
		}
	}
	return out
}

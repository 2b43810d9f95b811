package host

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/rivetmetal/rivet/plugins"
)

// Registration records what was negotiated with one running plugin. The
// conductor stores it (per hardware type) so the API and operators can see
// which versions and capabilities each driver runs with.
type Registration struct {
	// Driver is the driver name ("fake").
	Driver string
	// Path is the binary run; BuiltIn says it is the rivet binary itself.
	Path    string
	BuiltIn bool
	// Pinned says the binary's sha256 was checked against Config.Checksums.
	Pinned bool
	// PluginName and PluginVersion are what the plugin reports.
	PluginName    string
	PluginVersion string
	// Protocol is the negotiated protocol major.
	Protocol int
	// HardwareTypes lists the hardware types served.
	HardwareTypes []string
	// Interfaces maps each negotiated interface to its API version.
	Interfaces map[plugins.Interface]int
	// Capabilities lists the optional features the plugin advertised.
	Capabilities []plugins.Capability
	// PID is the plugin process id.
	PID int
	// StartedAt is when this process was started.
	StartedAt time.Time
}

// Has reports whether the plugin advertised c.
func (r Registration) Has(c plugins.Capability) bool { return slices.Contains(r.Capabilities, c) }

// highestCommon returns the highest version in both a and b.
func highestCommon(a, b []int) (int, bool) {
	best, ok := 0, false
	for _, v := range a {
		if slices.Contains(b, v) && (!ok || v > best) {
			best, ok = v, true
		}
	}
	return best, ok
}

// negotiateInterfaces picks, for each interface the plugin serves and the
// host knows, the highest common API version. Interfaces without overlap
// are dropped and reported; with nothing left the result is an error
// joining one *IncompatibleError per interface.
func negotiateInterfaces(driver string, host map[plugins.Interface][]int, info plugins.Info) (map[plugins.Interface]int, []error, error) {
	picked := map[plugins.Interface]int{}
	var dropped []error
	for _, iface := range slices.Sorted(maps.Keys(info.Interfaces)) {
		hv, known := host[iface]
		if !known {
			continue // an interface newer than this host: not called
		}
		v, ok := highestCommon(hv, info.Interfaces[iface])
		if !ok {
			dropped = append(dropped, &IncompatibleError{Driver: driver, Interface: iface, Host: hv, Plugin: info.Interfaces[iface]})
			continue
		}
		picked[iface] = v
	}
	if len(picked) == 0 {
		if len(dropped) == 0 {
			dropped = append(dropped, &IncompatibleError{Driver: driver, Interface: "any", Plugin: nil})
		}
		return nil, nil, errors.Join(dropped...)
	}
	return picked, dropped, nil
}

package plugins

import (
	"context"
	"fmt"
	"slices"
)

// Interface names a hardware interface, as Ironic does.
type Interface string

// Hardware interfaces a plugin can serve.
const (
	InterfacePower      Interface = "power"
	InterfaceManagement Interface = "management"
	InterfaceDeploy     Interface = "deploy"
	InterfaceInspect    Interface = "inspect"
)

// Capability names an optional feature a plugin advertises in Info. The
// host uses a feature only when it is advertised.
type Capability string

// Capabilities. CapabilityNMI, CapabilityCleanSteps and CapabilitySoftPower
// are derived from the interfaces a driver implements; the others a driver
// declares in its Description because they describe hardware reach, not a
// Go method.
const (
	CapabilityNMI          Capability = "nmi"
	CapabilityCleanSteps   Capability = "clean_steps"
	CapabilitySoftPower    Capability = "soft_power"
	CapabilityVirtualMedia Capability = "virtual_media"
)

// Driver is the value a plugin serves. Beyond Describe it implements any of
// the capability interfaces; the SDK inspects which and advertises them.
type Driver interface {
	// Describe names the driver and what it serves. It is called once, at
	// Serve, and must not do I/O.
	Describe() Description
}

// Description is what a driver says about itself.
type Description struct {
	// Name is the plugin's name ("fake", "redfish", "acme-bmc").
	Name string
	// Version is the plugin's own release, free form ("1.4.2").
	Version string
	// HardwareTypes lists the Ironic hardware types served ("fake-hardware").
	HardwareTypes []string
	// Capabilities lists declared optional features (CapabilityVirtualMedia).
	// Capabilities backed by an interface are added by the SDK.
	Capabilities []Capability
}

// Configurer is optionally implemented by a Driver that wants to know what
// the host negotiated (for example to enable a newer behaviour only when
// the host asked for that interface version).
type Configurer interface {
	Configure(ctx context.Context, n Negotiation) error
}

// Info is what a plugin advertises in band (the Info RPC).
type Info struct {
	Name          string
	Version       string
	HardwareTypes []string
	// Interfaces maps each served interface to its API versions, ascending.
	Interfaces map[Interface][]int
	// Capabilities is sorted and without duplicates.
	Capabilities []Capability
	// ProtocolVersions lists every protocol major the plugin can serve.
	ProtocolVersions []int
}

// Has reports whether the plugin advertised c.
func (i Info) Has(c Capability) bool { return slices.Contains(i.Capabilities, c) }

// Negotiation is what the host picked and tells the plugin (Configure).
type Negotiation struct {
	// Protocol is the go-plugin protocol major in use.
	Protocol int
	// Interfaces maps each interface the host will call to its API version.
	// An interface absent here will not be called.
	Interfaces map[Interface]int
	// HostVersion is the conductor's release, for the plugin's logs.
	HostVersion string
}

// InterfaceVersions lists, per interface, the API versions this SDK release
// can serve. A later SDK adds versions here without removing old ones.
// Power version 2 (timeouts, soft power) needs protocol 2; see
// InterfaceProtocol.
func InterfaceVersions() map[Interface][]int {
	return map[Interface][]int{
		InterfacePower:      {1, 2},
		InterfaceManagement: {1, 2}, // 2: Management2 (boot mode, secure boot, indicators, vmedia)
		InterfaceDeploy:     {1},
		InterfaceInspect:    {1},
		InterfaceRAID:       {1},
		InterfaceBIOS:       {1},
		InterfaceFirmware:   {1},
		InterfaceConsole:    {1},
	}
}

// interfaceProtocols records the interface versions that need a protocol
// major above 1, because their calls exist only there.
var interfaceProtocols = map[Interface]map[int]int{
	InterfacePower:    {2: 2}, // the rivet.driver.v2.Power service
	InterfaceBIOS:     {1: 2}, // the rivet.driver.v2.BIOS service
	InterfaceFirmware: {1: 2}, // the rivet.driver.v2.Firmware service
	InterfaceConsole:  {1: 2}, // the rivet.driver.v2.Console service
}

// InterfaceProtocol returns the lowest protocol major that carries version
// v of iface.
func InterfaceProtocol(iface Interface, v int) int {
	if p, ok := interfaceProtocols[iface][v]; ok {
		return p
	}
	return 1
}

// InterfaceVersionsFor keeps, of versions, those protocol major p carries:
// what a host may negotiate once go-plugin has picked p.
func InterfaceVersionsFor(p int, versions map[Interface][]int) map[Interface][]int {
	out := make(map[Interface][]int, len(versions))
	for iface, vs := range versions {
		for _, v := range vs {
			if InterfaceProtocol(iface, v) <= p {
				out[iface] = append(out[iface], v)
			}
		}
	}
	return out
}

// Describe builds the Info a plugin serving d advertises, from d's
// Description and the interfaces it implements. It refuses a declared capability that needs a
// method d lacks, so nothing is ever advertised that cannot be called.
func Describe(d Driver, protocols []int) (Info, error) {
	desc := d.Describe()
	if desc.Name == "" {
		return Info{}, fmt.Errorf("plugin: Describe returned no Name")
	}
	if len(desc.HardwareTypes) == 0 {
		return Info{}, fmt.Errorf("plugin %s: Describe returned no HardwareTypes", desc.Name)
	}
	all := InterfaceVersions()
	info := Info{
		Name:             desc.Name,
		Version:          desc.Version,
		HardwareTypes:    slices.Clone(desc.HardwareTypes),
		Interfaces:       map[Interface][]int{},
		ProtocolVersions: slices.Clone(protocols),
	}
	served := map[Interface]bool{}
	_, served[InterfacePower] = d.(PowerInterface)
	_, served[InterfaceManagement] = d.(ManagementInterface)
	_, served[InterfaceDeploy] = d.(DeployInterface)
	_, served[InterfaceInspect] = d.(Inspector)
	_, served[InterfaceRAID] = d.(RAIDInterface)
	_, served[InterfaceBIOS] = d.(BIOSInterface)
	_, served[InterfaceFirmware] = d.(FirmwareInterface)
	_, served[InterfaceConsole] = d.(ConsoleInterface)
	for iface, ok := range served {
		if ok {
			info.Interfaces[iface] = all[iface]
		}
	}
	if len(info.Interfaces) == 0 {
		return Info{}, fmt.Errorf("plugin %s: implements no hardware interface completely (power needs GetPowerState, SetPowerState and Reboot)", desc.Name)
	}
	_, powerV2 := d.(PowerInterfaceV2)
	_, soft := d.(SoftPowerer)
	if served[InterfacePower] && !powerV2 {
		info.Interfaces[InterfacePower] = []int{1}
	}
	if _, mgmtV2 := d.(ManagementInterfaceV2); served[InterfaceManagement] && !mgmtV2 {
		info.Interfaces[InterfaceManagement] = []int{1}
	}
	if soft && !(powerV2 && served[InterfacePower]) {
		return Info{}, fmt.Errorf("plugin %s: implements SoftPowerOff and SoftReboot but not power interface version 2 (SetPowerStateWithin and RebootWithin), which carries them", desc.Name)
	}
	// Advertise only the versions the served protocols carry.
	info.Interfaces = InterfaceVersionsFor(slices.Max(append([]int{1}, protocols...)), info.Interfaces)
	powerV2 = slices.Contains(info.Interfaces[InterfacePower], 2)
	_, nmi := d.(NMIInjector)
	_, lists := d.(CleanStepLister)
	_, runs := d.(CleanStepExecutor)
	_, validates := d.(Validator)
	_, declares := d.(PropertyDeclarer)
	_, sensors := d.(SensorReader)
	derived := map[Capability]bool{
		CapabilitySensors:    sensors && slices.Max(append([]int{1}, protocols...)) >= 2,
		CapabilityNMI:        nmi && served[InterfaceManagement],
		CapabilityCleanSteps: lists && runs && served[InterfaceDeploy],
		CapabilitySoftPower:  soft && powerV2 && served[InterfacePower],
		CapabilityValidate:   validates,
		CapabilityProperties: declares,
	}
	caps := slices.Clone(desc.Capabilities)
	for c, ok := range derived {
		if ok {
			caps = append(caps, c)
		}
	}
	for _, c := range desc.Capabilities {
		if has, isDerived := derived[c]; isDerived && !has {
			return Info{}, fmt.Errorf("plugin %s: declares capability %q but lacks the methods behind it", desc.Name, c)
		}
	}
	slices.Sort(caps)
	info.Capabilities = slices.Compact(caps)
	return info, nil
}

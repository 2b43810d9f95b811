package catalog

import (
	"slices"
	"strings"
)

// The conductor's own implementations. The no-* ones do nothing: a node
// using one gets Ironic's UnsupportedDriverExtension for that interface.
const (
	NoConsole = "no-console"
	NoInspect = "no-inspect"
	NoRAID    = "no-raid"
	NoVendor  = "no-vendor"
	// NoRescue, NoBIOS and NoFirmware are the rescue (API 1.38), bios
	// (1.40) and firmware (1.86) interfaces of every hardware type until a
	// driver offers a real one.
	NoRescue   = "no-rescue"
	NoBIOS     = "no-bios"
	NoFirmware = "no-firmware"
	// NoopStorage is the storage interface (API 1.33) of nodes without
	// volume targets (Ironic's "noop").
	NoopStorage = "noop"
	// NoopNetwork is the network interface that leaves networking to the
	// operator (Ironic's "noop").
	NoopNetwork = "noop"
	// IPXE is the boot interface of network-boot deploys whose iPXE scripts
	// the conductor serves ([conductor] boot_http_address).
	IPXE = "ipxe"
	// PXE is the boot interface of network-boot deploys when the conductor
	// serves no boot scripts: the network's own PXE setup boots the node.
	PXE = "pxe"
	// RedfishVirtualMedia is the boot interface of the redfish deploy: the
	// BMC boots an ISO inserted as virtual media.
	RedfishVirtualMedia = "redfish-virtual-media"
	// Ramdisk is the deploy interface of Rivet's real drivers: boot a
	// ramdisk or ISO and consider the node active (Ironic's "ramdisk").
	Ramdisk = "ramdisk"
	// Direct is the conductor's deploy interface that boots the
	// ironic-python-agent through the driver's ramdisk boot and has it write
	// the image to disk (Ironic's "direct"); offered with every plugin deploy.
	Direct = "direct"
	// IPMISocat is the ipmi plugin's serial console: a TCP endpoint on the
	// conductor's host bridged to the BMC's Serial-over-LAN (Ironic's
	// ipmitool-socat; console_info type "socat").
	IPMISocat = "ipmi-socat"
	// RedfishGraphical is the redfish plugin's graphical console (Ironic's
	// redfish-graphical): the BMC's own KVM page.
	RedfishGraphical = "redfish-graphical"
	// Fake is every interface of the fake-hardware type.
	Fake = "fake"
	// AgentInspect is the in-band inspect interface: the conductor boots
	// the ramdisk agent the way the deploy boots its image and the agent
	// posts the inventory to /v1/continue_inspection (Ironic's "agent").
	AgentInspect = "agent"
)

// Unsupported reports whether implementation name does nothing (a no-*
// implementation).
func Unsupported(name string) bool { return strings.HasPrefix(name, "no-") }

// pluginImplementations name what the plugin of a known hardware type
// serves, per interface; the deploy of every hardware type but
// fake-hardware is Ramdisk, and any other interface of an unknown hardware
// type is named after the hardware type.
var pluginImplementations = map[string]map[string]string{
	"fake-hardware": {Power: Fake, Management: Fake, Deploy: Fake, Inspect: Fake, RAID: Fake, BIOS: Fake, Firmware: Fake, Console: Fake},
	"ipmi":          {Power: "ipmitool", Management: "ipmitool", Deploy: Ramdisk, Console: IPMISocat},
	"redfish":       {Power: "redfish", Management: "redfish", Deploy: Ramdisk, Inspect: "redfish", RAID: "redfish", Console: RedfishGraphical},
}

func pluginImpl(hw, iface string) string {
	if n, ok := pluginImplementations[hw][iface]; ok {
		return n
	}
	if iface == Deploy {
		return Ramdisk
	}
	return hw
}

// bootImpl names the boot interface a hardware type's deploy uses.
func bootImpl(hw string, o Options) string {
	switch hw {
	case "fake-hardware":
		return Fake
	case "redfish":
		return RedfishVirtualMedia
	}
	if o.BootServer {
		return IPXE
	}
	return PXE
}

// Served is one hardware type a conductor serves.
type Served struct {
	HardwareType string
	// Interfaces are the interface types its plugin negotiated ("power",
	// "management", "deploy", "inspect", "raid").
	Interfaces []string
}

// Options is what of a conductor's configuration shapes its catalog.
type Options struct {
	// BootServer is set when the conductor serves iPXE scripts ([conductor]
	// boot_http_address).
	BootServer bool
	// Rescue names rescue implementations the conductor runs itself
	// (conductor.Deps.Rescue), offered to every hardware type beside the
	// default no-rescue.
	Rescue []string
	// DefaultDeploy is the default deploy implementation of the hardware
	// types that deploy, fake-hardware aside ([conductor]
	// default_deploy_interface): Direct, Ironic's default, or Ramdisk
	// ("" too).
	DefaultDeploy string
}

// ForConductor builds one conductor's catalog: per hardware type served,
// each interface its plugin serves (one implementation, the default), and
// the conductor's own implementations: boot (when the plugin deploys),
// network and storage noop, console, raid, vendor, rescue, bios and
// firmware no-*, agent inspection (when the plugin deploys: it boots the
// agent as a deploy boots its image) and no-inspect besides the plugin's
// inspection, so inspection can be turned off per node.
func ForConductor(served []Served, o Options) *Catalog {
	var offers []Offer
	add := func(hw, iface, name string, def bool) {
		offers = append(offers, Offer{HardwareType: hw, Interface: iface, Name: name, Default: def})
	}
	for _, s := range served {
		hw, has := s.HardwareType, func(i string) bool { return slices.Contains(s.Interfaces, i) }
		direct := o.DefaultDeploy == Direct && hw != "fake-hardware"
		for _, iface := range []string{Power, Management, Deploy} {
			if has(iface) {
				add(hw, iface, pluginImpl(hw, iface), iface != Deploy || !direct)
			}
		}
		if has(Deploy) {
			add(hw, Boot, bootImpl(hw, o), true)
			add(hw, Deploy, Direct, direct)
		}
		if has(Inspect) {
			add(hw, Inspect, pluginImpl(hw, Inspect), true)
		}
		if has(Deploy) {
			add(hw, Inspect, AgentInspect, false)
		}
		add(hw, Inspect, NoInspect, !has(Inspect))
		add(hw, Network, NoopNetwork, true)
		if has(Console) {
			// Off by default, as in Ironic: a console is an opt-in per node.
			add(hw, Console, pluginImpl(hw, Console), false)
		}
		add(hw, Console, NoConsole, true)
		add(hw, RAID, NoRAID, true)
		if has(RAID) {
			// The plugin's raid (interface version 1) is chosen per node
			// (raid_interface); no-raid stays the default, as in Ironic,
			// where a RAID implementation is opted into.
			add(hw, RAID, pluginImpl(hw, RAID), false)
		}
		add(hw, Vendor, NoVendor, true)
		add(hw, Storage, NoopStorage, true)
		add(hw, Rescue, NoRescue, true)
		for _, r := range o.Rescue {
			add(hw, Rescue, r, false)
		}
		// bios and firmware (plugin interfaces at version 1, protocol 2):
		// the plugin's implementation is the default where negotiated, as
		// Ironic's hardware types list theirs before no-bios/no-firmware.
		if has(BIOS) {
			add(hw, BIOS, pluginImpl(hw, BIOS), true)
		}
		add(hw, BIOS, NoBIOS, !has(BIOS))
		if has(Firmware) {
			add(hw, Firmware, pluginImpl(hw, Firmware), true)
		}
		add(hw, Firmware, NoFirmware, !has(Firmware))
	}
	return New(offers)
}

// knownInterfaces are the interfaces the plugins of Rivet's own hardware
// types implement.
var knownInterfaces = map[string][]string{
	"fake-hardware": {Power, Management, Deploy, Inspect, BIOS, Firmware, Console},
	"ipmi":          {Power, Management, Deploy, Console},
	"redfish":       {Power, Management, Deploy, Inspect, BIOS, Firmware, Console},
}

// Known is the catalog Rivet's own hardware types (fake-hardware, ipmi,
// redfish) have on a conductor without a boot server: what the
// backfill_node_interfaces migration falls back to for a hardware type no
// conductor has registered.
func Known() *Catalog {
	var served []Served
	for hw, ifaces := range knownInterfaces {
		served = append(served, Served{HardwareType: hw, Interfaces: ifaces})
	}
	return ForConductor(served, Options{})
}

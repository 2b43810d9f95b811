package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/rivetmetal/rivet/core/release"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/drivers"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/utils"

	"github.com/rivetmetal/rivet/drivers/redfish/sim"
	"github.com/rivetmetal/rivet/test/stacktest"
)

// Metal3's baremetal-operator (BMO) against Rivet, with gophercloud v2
// (BMO's client library): its microversion negotiation and its call
// sequence for a BareMetalHost whose BMC is redfish-virtualmedia, over an
// all-in-one stack as rivet dev runs it (API and conductor in process over
// SQLite, the redfish plugin as a process, the redfish simulator as the
// BMC). The ironic-python-agent is agenttest's fake agent, "started" when
// the simulated machine has booted the agent ISO from virtual media.
// BMO's module is not a dependency (its proxy is unreachable here): the
// calls are written from its pkg/provisioner/ironic and named in the
// comments. What Rivet does not offer yet is logged as "GAP:" and left
// out; the same code runs it once it lands.

// bmoBaseline is BMO's minimum microversion (clients/features.go: 1.89,
// virtual media attach and detach): it refuses an older Ironic.
const bmoBaseline = 89

// chooseMicroversion is BMO's ChooseMicroversion: the newest of the
// versions whose features it uses that the server offers.
func chooseMicroversion(maxMinor int) string {
	for _, v := range []int{110, 109, 95, 93} { // deploy abort, health, disable_power_off, vmedia GET
		if maxMinor >= v {
			return fmt.Sprintf("1.%d", v)
		}
	}
	return fmt.Sprintf("1.%d", bmoBaseline)
}

// bmo is one BareMetalHost's provisioner as BMO runs it.
type bmo struct {
	t    *testing.T
	ctx  context.Context
	c    *gophercloud.ServiceClient
	disk *ramdisk
	// gaps names what of BMO's sequence Rivet lacks: each is logged and
	// the step left out (docs/api.md lists them).
	gaps *[]string
}

func (b *bmo) gap(format string, args ...any) {
	b.t.Helper()
	msg := fmt.Sprintf(format, args...)
	b.t.Log("GAP: " + msg)
	*b.gaps = append(*b.gaps, msg)
}

// negotiate connects as BMO's clients.IronicClient and GetAvailableFeatures
// do: noauth on the /v1/ endpoint, GET / for the supported microversions,
// refuse below the baseline, then pin the chosen version.
func negotiate(t *testing.T, ctx context.Context, apiURL string) (*gophercloud.ServiceClient, int) {
	t.Helper()
	c, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: apiURL + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	c.Microversion = fmt.Sprintf("1.%d", bmoBaseline)
	mvs, err := utils.GetSupportedMicroversions(ctx, c)
	if err != nil {
		t.Fatalf("GetSupportedMicroversions: %v", err)
	}
	if mvs.MaxMajor != 1 || mvs.MaxMinor < bmoBaseline {
		t.Fatalf("BMO refuses this server: ironic API 1.%d or newer is required, got %d.%d", bmoBaseline, mvs.MaxMajor, mvs.MaxMinor)
	}
	if mvs.MinMajor != 1 || mvs.MinMinor != 1 {
		t.Errorf("minimum microversion %d.%d, want 1.1", mvs.MinMajor, mvs.MinMinor)
	}
	// The stack serves what Rivet advertises, no raised test maximum.
	if head := release.Default().Head().API; mvs.MaxMajor != head.Major || mvs.MaxMinor != head.Minor {
		t.Errorf("the server offers up to %d.%d, want Rivet's advertised %s", mvs.MaxMajor, mvs.MaxMinor, head)
	}
	c.Microversion = chooseMicroversion(mvs.MaxMinor)
	t.Logf("server offers up to 1.%d; BMO chooses %s", mvs.MaxMinor, c.Microversion)
	return c, mvs.MaxMinor
}

// change is BMO's tryChangeNodeProvisionState: 409 (node locked) is
// retried later, anything else but 202 fails.
func (b *bmo) change(id string, opts nodes.ProvisionStateOpts) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := nodes.ChangeProvisionState(b.ctx, b.c, id, opts).ExtractErr()
		if err == nil {
			return
		}
		if !gophercloud.ResponseCodeIs(err, http.StatusConflict) || time.Now().After(deadline) {
			b.t.Fatalf("provision %s of %s: %v", opts.Target, id, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// power is BMO's changePower: 202, or 409 retried.
func (b *bmo) power(id string, target nodes.TargetPowerState, want string) {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := nodes.ChangePowerState(b.ctx, b.c, id, nodes.PowerStateOpts{Target: target}).ExtractErr()
		if err == nil {
			break
		}
		if !gophercloud.ResponseCodeIs(err, http.StatusConflict) || time.Now().After(deadline) {
			b.t.Fatalf("power %s of %s: %v", target, id, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		n := b.get(id)
		if n.PowerState == want && n.TargetPowerState == "" {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("node %s power %q (target %q), want %q; last_error %q", id, n.PowerState, n.TargetPowerState, want, n.LastError)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *bmo) get(id string) *nodes.Node {
	b.t.Helper()
	n, err := nodes.Get(b.ctx, b.c, id).Extract()
	if err != nil {
		b.t.Fatalf("nodes.Get %s: %v", id, err)
	}
	return n
}

// wait polls the node (as BMO's reconciles do) until it rests in want,
// the ramdisk playing the agent meanwhile, and checks every state seen on
// the way is one of via: the path BMO's state machine expects.
func (b *bmo) wait(id, want string, via ...string) *nodes.Node {
	b.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	var seen []string
	for {
		n := b.get(id)
		if len(seen) == 0 || seen[len(seen)-1] != n.ProvisionState {
			seen = append(seen, n.ProvisionState)
		}
		if n.ProvisionState == want && n.TargetProvisionState == "" {
			for _, s := range seen[:len(seen)-1] {
				if !slices.Contains(via, s) {
					b.t.Errorf("node %s went through %v to %s: %q is not on BMO's path %v", id, seen, want, s, via)
				}
			}
			return n
		}
		if strings.HasSuffix(n.ProvisionState, "failed") || n.ProvisionState == "error" {
			b.t.Fatalf("node %s is %s (states %v), want %s: last_error %q", id, n.ProvisionState, seen, want, n.LastError)
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("node %s still %s (states %v), want %s: last_error %q", id, n.ProvisionState, seen, want, n.LastError)
		}
		if b.disk != nil {
			b.disk.tick(b.ctx, id, n.ProvisionState)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// patch is BMO's tryUpdateNode (its NodeUpdater's add operations).
func (b *bmo) patch(id string, ops map[string]any) *nodes.Node {
	b.t.Helper()
	var opts nodes.UpdateOpts
	for path, v := range ops {
		if v == nil {
			opts = append(opts, nodes.UpdateOperation{Op: nodes.RemoveOp, Path: path})
			continue
		}
		opts = append(opts, nodes.UpdateOperation{Op: nodes.AddOp, Path: path, Value: v})
	}
	n, err := nodes.Update(b.ctx, b.c, id, opts).Extract()
	if err != nil {
		b.t.Fatalf("nodes.Update %s %v: %v", id, ops, err)
	}
	return n
}

// offered reports whether the redfish hardware type offers impl for
// iface ("raid", "bios", "firmware").
func (b *bmo) offered(iface, impl string) bool {
	b.t.Helper()
	d, err := drivers.GetDriverDetails(b.ctx, b.c, "redfish").Extract()
	if err != nil {
		b.t.Fatalf("GET /v1/drivers/redfish: %v", err)
	}
	list := map[string][]string{"raid": d.EnabledRaidInterfaces, "bios": d.EnabledBiosInterfaces,
		"firmware": d.EnabledFirmwareInterfaces}[iface]
	return slices.Contains(list, impl)
}

// hardwareDetails is the part of BMO's HardwareDetails built from the
// inventory (hardwaredetails.GetHardwareDetails).
type hardwareDetails struct {
	RAMMebibytes int
	NICs         []struct{ Name, MAC, IP string }
	Disks        []struct {
		Name      string
		SizeBytes int64
		Type      string
	}
	CPU struct {
		Arch  string
		Count int
	}
	Hostname string
}

func (b *bmo) hardwareDetails(id string) hardwareDetails {
	b.t.Helper()
	data, err := nodes.GetInventory(b.ctx, b.c, id).Extract()
	if err != nil {
		b.t.Fatalf("nodes.GetInventory %s: %v", id, err)
	}
	if _, err := data.PluginData.AsStandardData(); err != nil {
		// BMO logs this and goes on without the PXE flags and LLDP.
		b.t.Logf("plugin_data is not Ironic's standard data: %v", err)
	}
	inv := data.Inventory
	var hd hardwareDetails
	hd.RAMMebibytes, hd.Hostname = inv.Memory.PhysicalMb, inv.Hostname
	hd.CPU.Arch, hd.CPU.Count = inv.CPU.Architecture, inv.CPU.Count
	for _, i := range inv.Interfaces {
		hd.NICs = append(hd.NICs, struct{ Name, MAC, IP string }{i.Name, i.MACAddress, i.IPV4Address})
	}
	for _, d := range inv.Disks {
		typ := "HDD"
		if !d.Rotational {
			typ = "SSD"
		}
		hd.Disks = append(hd.Disks, struct {
			Name      string
			SizeBytes int64
			Type      string
		}{d.Name, d.Size, typ})
	}
	return hd
}

// machineMACs reads a simulated machine's NIC MACs over Redfish (what
// the BareMetalHost's bootMACAddress and the inventory carry).
func machineMACs(t *testing.T, bmcURL, system string) []string {
	t.Helper()
	getJSON := func(path string) map[string]any {
		req, _ := http.NewRequest(http.MethodGet, bmcURL+path, nil)
		req.SetBasicAuth(sim.DefaultUsername, sim.DefaultPassword)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		return out
	}
	var macs []string
	for _, m := range getJSON("/redfish/v1/Systems/" + system + "/EthernetInterfaces")["Members"].([]any) {
		nic := getJSON(m.(map[string]any)["@odata.id"].(string))
		macs = append(macs, strings.ToLower(nic["MACAddress"].(string)))
	}
	if len(macs) == 0 {
		t.Fatalf("system %s has no NICs", system)
	}
	return macs
}

// register is BMO's Register for a new host: nodes.Create with the
// fields enrollNode sets for a redfish-virtualmedia BMC, the boot MAC's
// port (createNodePort: looked up by address first), then manage.
func (b *bmo) register(name, bmcURL, system, bootMAC string) *nodes.Node {
	b.t.Helper()
	disablePowerOff := false
	opts := nodes.CreateOpts{
		Name:   name,
		Driver: "redfish",
		DriverInfo: map[string]any{ // redfishAccessDetails.DriverInfo
			"redfish_username": sim.DefaultUsername, "redfish_password": sim.DefaultPassword,
			"redfish_address": bmcURL, "redfish_system_id": "/redfish/v1/Systems/" + system,
		},
		BootInterface: "redfish-virtual-media",
		// DeployInterface: BMO's deployInterface is "" for a host without
		// a live ISO or custom deploy yet, so it is left out.
		InspectInterface:  "agent", // BMO's defaultInspectInterface
		FirmwareInterface: "redfish",
		RAIDInterface:     "redfish",
		DisablePowerOff:   &disablePowerOff,
		Properties:        map[string]any{"capabilities": "boot_mode:uefi", "cpu_arch": "x86_64"},
	}
	for _, x := range []struct {
		iface string
		field *string
	}{{"raid", &opts.RAIDInterface}, {"firmware", &opts.FirmwareInterface}} {
		if !b.offered(x.iface, "redfish") {
			b.gap("%s_interface redfish (BMO sets it for redfish-virtualmedia) is not offered: node created with the default", x.iface)
			*x.field = ""
		}
	}
	b.findExisting(name, bootMAC)
	n, err := nodes.Create(b.ctx, b.c, opts).Extract()
	if err != nil {
		b.t.Fatalf("nodes.Create (BMO's enrollNode): %v", err)
	}
	if n.ProvisionState != string(nodes.Enroll) || n.DriverInfo["redfish_password"] != "******" || n.InspectInterface != "agent" ||
		n.BootInterface != "redfish-virtual-media" || n.DisablePowerOff {
		b.t.Errorf("created node: state %s, inspect %s, boot %s, disable_power_off %v, driver_info %v",
			n.ProvisionState, n.InspectInterface, n.BootInterface, n.DisablePowerOff, n.DriverInfo)
	}
	b.createPort(n.UUID, bootMAC, true)
	// BMO also finds hosts by name on later reconciles.
	if got := b.get(name); got.UUID != n.UUID {
		b.t.Errorf("nodes.Get by name: %s, want %s", got.UUID, n.UUID)
	}
	b.change(n.UUID, nodes.ProvisionStateOpts{Target: nodes.TargetManage})
	return b.wait(n.UUID, string(nodes.Manageable), string(nodes.Enroll), string(nodes.Verifying))
}

// createPort is BMO's createNodePort: list ports by address, create the
// missing one with its PXE flag.
func (b *bmo) createPort(node, mac string, pxe bool) {
	b.t.Helper()
	pages, err := ports.List(b.c, ports.ListOpts{Address: mac, Fields: []string{"node_uuid", "uuid", "address"}}).AllPages(b.ctx)
	if err != nil {
		b.t.Fatalf("ports.List address=%s: %v", mac, err)
	}
	existing, err := ports.ExtractPorts(pages)
	if err != nil {
		b.t.Fatal(err)
	}
	for _, p := range existing {
		if p.NodeUUID != node {
			b.t.Fatalf("port %s belongs to node %s", mac, p.NodeUUID)
		}
		return
	}
	if _, err := ports.Create(b.ctx, b.c, ports.CreateOpts{NodeUUID: node, Address: mac, PXEEnabled: &pxe}).Extract(); err != nil {
		b.t.Fatalf("ports.Create %s: %v", mac, err)
	}
}

// nodePorts is BMO's getPorts for a node.
func (b *bmo) nodePorts(node string) []string {
	b.t.Helper()
	pages, err := ports.List(b.c, ports.ListOpts{NodeUUID: node, Fields: []string{"node_uuid", "uuid", "address"}}).AllPages(b.ctx)
	if err != nil {
		b.t.Fatalf("ports.List node=%s: %v", node, err)
	}
	all, err := ports.ExtractPorts(pages)
	if err != nil {
		b.t.Fatal(err)
	}
	var macs []string
	for _, p := range all {
		macs = append(macs, p.Address)
	}
	slices.Sort(macs)
	return macs
}

// configure is BMO's configureNode: the agent ISO in driver_info
// (setDeployImage; the kernel/ramdisk keys removed), automated_clean,
// capabilities.
func (b *bmo) configure(id, iso string, automatedClean bool) {
	b.t.Helper()
	n := b.get(id)
	ops := map[string]any{"/driver_info/deploy_iso": iso, "/automated_clean": automatedClean,
		"/properties/capabilities": "boot_mode:uefi", "/properties/cpu_arch": "x86_64"}
	for _, k := range []string{"deploy_kernel", "deploy_ramdisk", "kernel_append_params"} {
		if _, ok := n.DriverInfo[k]; ok {
			ops["/driver_info/"+k] = nil
		}
	}
	got := b.patch(id, ops)
	if got.AutomatedClean == nil || *got.AutomatedClean != automatedClean || got.DriverInfo["deploy_iso"] != iso {
		b.t.Errorf("configured node: automated_clean %v, deploy_iso %v", got.AutomatedClean, got.DriverInfo["deploy_iso"])
	}
}

// validate is BMO's validateNode (in setUpForProvisioning, after the
// instance_info update): boot and deploy must pass (and power and
// management, which BMO does not read, do here).
func (b *bmo) validate(id string) {
	b.t.Helper()
	v, err := nodes.Validate(b.ctx, b.c, id).Extract()
	if err != nil {
		b.t.Fatalf("nodes.Validate: %v", err)
	}
	if !v.Boot.Result || !v.Deploy.Result || !v.Power.Result || !v.Management.Result {
		b.t.Fatalf("validate: boot %v %q, deploy %v %q, power %v %q, management %v %q", v.Boot.Result, v.Boot.Reason,
			v.Deploy.Result, v.Deploy.Reason, v.Power.Result, v.Power.Reason, v.Management.Result, v.Management.Reason)
	}
}

// isGap reports whether err is Rivet refusing a call for a microversion
// or feature it does not implement yet (406, or 404 for a missing route).
func isGap(err error) bool {
	return gophercloud.ResponseCodeIs(err, http.StatusNotAcceptable) || gophercloud.ResponseCodeIs(err, http.StatusNotFound)
}

// TestMetal3BMOVirtualMediaLifecycle runs BMO's calls for a BareMetalHost
// with a redfish-virtualmedia BMC through its whole life: registering,
// inspecting (agent), preparing, providing (automated cleaning),
// provisioning (direct deploy with a config drive), power, the data
// image's virtual media, firmware and BIOS reads, deprovisioning and
// deleting; and a second host provisioned with a live ISO (ramdisk deploy).
func TestMetal3BMOVirtualMediaLifecycle(t *testing.T) {
	bmcSim, bmcSrv := stacktest.StartBMC(t, sim.Options{Systems: 2, Seed: 3, SystemVirtualMedia: true})
	apiURL := newMetal3Stack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	c, _ := negotiate(t, ctx, apiURL)
	var gaps []string
	defer func() {
		if len(gaps) > 0 {
			t.Logf("BMO calls left out (%d): %s", len(gaps), strings.Join(gaps, "; "))
		}
	}()
	const iso = "http://images.metal3.test/ironic-python-agent.iso"
	macs := machineMACs(t, bmcSrv.URL, sim.SystemID(0))
	disk := &ramdisk{t: t, apiURL: apiURL, bmc: bmcSim, system: sim.SystemID(0), macs: macs, isoWant: iso}
	b := &bmo{t: t, ctx: ctx, c: c, disk: disk, gaps: &gaps}

	// Registering: create, boot MAC port, manage (verifying), then the
	// next reconcile's configureNode.
	n := b.register("metal3~host-0", bmcSrv.URL, sim.SystemID(0), macs[0])
	id := n.UUID
	// preprovisioningNetworkDataName: network_data for the ramdisk (1.66).
	preprov := map[string]any{"links": []any{map[string]any{"id": "eno1", "type": "phy", "ethernet_mac_address": macs[0]}},
		"networks": []any{map[string]any{"id": "prov", "network_id": "prov", "link": "eno1", "type": "ipv4", "ip_address": "192.0.2.10",
			"netmask": "255.255.255.0"}}, "services": []any{}}
	if got := b.patch(id, map[string]any{"/network_data": preprov}); len(got.NetworkData) == 0 {
		t.Errorf("network_data after the PATCH: %v", got.NetworkData)
	}
	b.configure(id, iso, true)
	b.directDeploy(id)

	// Inspecting: inspect_interface agent (startInspection re-sets it),
	// target inspect, the agent posts its inventory; BMO reads it back.
	b.patch(id, map[string]any{"/inspect_interface": "agent"})
	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetInspect})
	b.wait(id, string(nodes.Manageable), string(nodes.Manageable), string(nodes.Inspecting), string(nodes.InspectWait))
	hd := b.hardwareDetails(id)
	if len(hd.NICs) != len(macs) || hd.NICs[0].MAC != macs[0] || hd.RAMMebibytes == 0 || hd.CPU.Count == 0 ||
		hd.CPU.Arch != "x86_64" || len(hd.Disks) == 0 || hd.Disks[0].SizeBytes == 0 {
		t.Errorf("hardware details from the inventory: %+v (machine NICs %v)", hd, macs)
	}
	// The next Register creates ports for the inspected NICs.
	for i, nic := range hd.NICs {
		b.createPort(id, nic.MAC, i == 0)
	}
	if got, want := b.nodePorts(id), slices.Sorted(slices.Values(macs)); !slices.Equal(got, want) {
		t.Errorf("ports %v, want the machine's NICs %v", got, want)
	}

	// Preparing: manual cleaning with the host's RAID (and BIOS) settings.
	b.prepare(id)

	// Providing: automated cleaning through the agent.
	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetProvide})
	if st := b.busyHosts()["metal3~host-0"]; st == "" {
		t.Error("loadBusyHosts: the host is not listed")
	}
	b.wait(id, string(nodes.Available), string(nodes.Manageable), string(nodes.Cleaning), string(nodes.CleanWait))
	if cmds := disk.commands(); !slices.Contains(cmds, "clean erase_devices_metadata") {
		t.Errorf("automated cleaning ran %v, want erase_devices_metadata", cmds)
	}

	// Provisioning (direct): getInstanceUpdateOpts, then target active
	// with the config drive as a JSON object.
	const sum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	b.patch(id, map[string]any{
		"/instance_uuid":                    "9a0b9a52-5c4e-4b0c-9f53-6a1b1d3f2e10",
		"/instance_info/capabilities":       map[string]any{"boot_mode": "uefi"},
		"/instance_info/image_source":       "http://images.metal3.test/ubuntu.raw",
		"/instance_info/image_disk_format":  "raw",
		"/instance_info/image_os_hash_algo": "sha256", "/instance_info/image_os_hash_value": sum,
		"/driver_info/force_persistent_boot_device": "Default",
	})
	b.validate(id)
	netData := map[string]any{"links": []any{map[string]any{"id": "eno1", "type": "phy", "ethernet_mac_address": macs[0]}},
		"networks": []any{map[string]any{"id": "net0", "network_id": "net0", "link": "eno1", "type": "ipv4_dhcp"}}, "services": []any{}}
	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetActive, ConfigDrive: nodes.ConfigDrive{
		UserData: "#cloud-config\n", NetworkData: netData,
		MetaData: map[string]any{"uuid": "9a0b9a52-5c4e-4b0c-9f53-6a1b1d3f2e10", "name": "host-0", "local-hostname": "host-0"}}})
	got := b.wait(id, string(nodes.Active), string(nodes.Available), string(nodes.Deploying), string(nodes.DeployWait))
	if got.PowerState != "power on" || got.LastError != "" {
		t.Errorf("active: power %q, last_error %q", got.PowerState, got.LastError)
	}
	if cmds := disk.commands(); !slices.Contains(cmds, "deploy write_image") {
		t.Errorf("the agent ran %v, want write_image", cmds)
	}
	disk.mu.Lock()
	drive := disk.configDrive
	disk.mu.Unlock()
	var gotNet, gotMeta map[string]any
	_ = json.Unmarshal(configDriveFile(t, drive, "openstack", "latest", "network_data.json"), &gotNet)
	_ = json.Unmarshal(configDriveFile(t, drive, "openstack", "latest", "meta_data.json"), &gotMeta)
	if links, _ := gotNet["links"].([]any); len(links) != 1 || links[0].(map[string]any)["ethernet_mac_address"] != macs[0] {
		t.Errorf("network_data.json on the config drive: %v", gotNet)
	}
	if gotMeta["uuid"] != "9a0b9a52-5c4e-4b0c-9f53-6a1b1d3f2e10" || gotMeta["name"] != "host-0" {
		t.Errorf("meta_data.json on the config drive: %v", gotMeta)
	}
	if st, _ := bmcSim.System(sim.SystemID(0)); st.LastBootSource != "Hdd" && st.Boot.Target != "Hdd" {
		t.Errorf("after the deploy the machine boots %s (override %+v), want its disk", st.LastBootSource, st.Boot)
	}

	// Power: BMO's PowerOff (hard) and PowerOn.
	b.power(id, nodes.PowerOff, "power off")
	b.power(id, nodes.PowerOn, "power on")

	// The data image: virtual media attach (1.89), GET (1.93), detach.
	b.dataImage(id, "http://images.metal3.test/data.iso")

	// Firmware components and BIOS settings (HostFirmwareComponents and
	// HostFirmwareSettings controllers).
	b.firmwareAndBIOS(id)

	// Servicing: target service with service_steps, abort from service wait.
	b.servicing(id)

	// Deprovisioning: target deleted, automated cleaning, then delete.
	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetDeleted})
	b.wait(id, string(nodes.Available), string(nodes.Active), string(nodes.Deleting), string(nodes.Cleaning), string(nodes.CleanWait))
	b.delete(id)

	b.liveISO(bmcSrv.URL, bmcSim)
}

// liveISO is a second host whose image is a live ISO: deploy_interface
// ramdisk, instance_info boot_iso, no config drive (getConfigDrive), no
// cleaning (automatedCleaningMode disabled), inspection disabled.
func (b *bmo) liveISO(bmcURL string, bmcSim *sim.Simulator) {
	t := b.t
	macs := machineMACs(t, bmcURL, sim.SystemID(1))
	b.disk = nil
	n := b.register("metal3~host-live", bmcURL, sim.SystemID(1), macs[0])
	id := n.UUID
	b.configure(id, "http://images.metal3.test/ironic-python-agent.iso", false)
	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetProvide})
	b.wait(id, string(nodes.Available), string(nodes.Manageable))
	const live = "http://images.metal3.test/live.iso"
	b.patch(id, map[string]any{ // setLiveIsoUpdateOptsForNode
		"/instance_uuid":                            "5d8e3c1a-1f7b-4c8e-8a51-0e2f4b6c9d21",
		"/instance_info/capabilities":               map[string]any{"boot_mode": "uefi"},
		"/instance_info/boot_iso":                   live,
		"/deploy_interface":                         "ramdisk",
		"/driver_info/force_persistent_boot_device": "Default",
	})
	b.validate(id)
	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetActive})
	b.wait(id, string(nodes.Active), string(nodes.Available), string(nodes.Deploying), string(nodes.DeployWait))
	if st, _ := bmcSim.System(sim.SystemID(1)); st.PowerState != "On" || st.LastBootImage != live {
		t.Errorf("live ISO host: power %s, booted %q, want %s", st.PowerState, st.LastBootImage, live)
	}
	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetDeleted})
	b.wait(id, string(nodes.Available), string(nodes.Active), string(nodes.Deleting), string(nodes.Cleaning))
	// Re-provisioned with an image, BMO removes the ramdisk deploy
	// (setDirectDeployUpdateOptsForNode): back to the default, direct.
	if got := b.patch(id, map[string]any{"/deploy_interface": nil}); got.DeployInterface != "direct" {
		t.Errorf("deploy_interface removed: %q, want the default direct", got.DeployInterface)
	}
	b.delete(id)
}

// dataImage is BMO's AttachDataImage, GetDataImageStatus (which first
// checks the node is not reserved) and DetachDataImage.
func (b *bmo) dataImage(id, url string) {
	t := b.t
	err := nodes.AttachVirtualMedia(b.ctx, b.c, id, nodes.AttachVirtualMediaOpts{DeviceType: nodes.VirtualMediaCD, ImageURL: url}).ExtractErr()
	if isGap(err) {
		b.gap("virtual media attach (1.89): %v", err)
		return
	}
	if err != nil {
		t.Fatalf("AttachVirtualMedia: %v", err)
	}
	inserted := func() (bool, string) {
		deadline := time.Now().Add(30 * time.Second)
		for b.get(id).Reservation != "" {
			if time.Now().After(deadline) {
				t.Fatal("the node stayed reserved after the virtual media call")
			}
			time.Sleep(100 * time.Millisecond)
		}
		res := nodes.GetVirtualMedia(b.ctx, b.c, id)
		if res.Err != nil {
			t.Fatalf("GetVirtualMedia: %v", res.Err)
		}
		// BMO's VirtualMedia: a list of {image, inserted, media_types}.
		var list []struct {
			Image    string `json:"image"`
			Inserted bool   `json:"inserted"`
		}
		if err := res.ExtractInto(&list); err != nil {
			t.Fatalf("GetVirtualMedia body: %v", err)
		}
		for _, m := range list {
			if m.Inserted {
				return true, m.Image
			}
		}
		return false, ""
	}
	if ok, img := inserted(); !ok || img != url {
		t.Errorf("after attach: inserted %v, image %q, want %s", ok, img, url)
	}
	if err := nodes.DetachVirtualMedia(b.ctx, b.c, id, nodes.DetachVirtualMediaOpts{
		DeviceTypes: []nodes.VirtualMediaDeviceType{nodes.VirtualMediaCD}}).ExtractErr(); err != nil {
		t.Fatalf("DetachVirtualMedia: %v", err)
	}
	if ok, img := inserted(); ok {
		t.Errorf("after detach: still inserted %q", img)
	}
}

// firmwareAndBIOS is BMO's GetFirmwareComponents and GetFirmwareSettings
// (with the schema: detail=true).
func (b *bmo) firmwareAndBIOS(id string) {
	t := b.t
	if comps, err := nodes.ListFirmware(b.ctx, b.c, id).Extract(); err != nil {
		if !isGap(err) && !gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
			t.Errorf("ListFirmware: %v", err)
		}
		b.gap("firmware component list (1.86, nodes.ListFirmware): %v", err)
	} else {
		t.Logf("firmware components: %d", len(comps))
	}
	if _, err := nodes.ListBIOSSettings(b.ctx, b.c, id, nil).Extract(); err != nil {
		t.Errorf("ListBIOSSettings: %v", err)
	}
	settings, err := nodes.ListBIOSSettings(b.ctx, b.c, id, nodes.ListBIOSSettingsOpts{Detail: true}).Extract()
	switch {
	case err != nil && (isGap(err) || gophercloud.ResponseCodeIs(err, http.StatusBadRequest)):
		b.gap("BIOS settings with detail (1.74 registry): %v", err)
	case err != nil:
		t.Errorf("ListBIOSSettings detail: %v", err)
	case len(settings) == 0 && !b.offered("bios", "redfish"):
		b.gap("BIOS settings: the redfish bios interface is not offered, the list is empty")
	}
}

// servicing is BMO's startServicing: target service with service_steps
// (its steps are bios apply_configuration and firmware update; until the
// redfish bios interface exists the same call carries a raid
// apply_configuration step, which Rivet runs out of band), back to active.
func (b *bmo) servicing(id string) {
	t := b.t
	var step nodes.ServiceStep
	var name, value string
	if b.offered("bios", "redfish") {
		if name, value = b.biosChange(id); name == "" {
			return
		}
		step = nodes.ServiceStep{Interface: nodes.InterfaceBIOS, Step: "apply_configuration",
			Args: map[string]any{"settings": []map[string]any{{"name": name, "value": value}}}}
	} else {
		b.gap("servicing: BMO's service steps (bios apply_configuration, firmware update) need the redfish bios and firmware interfaces; its call runs with a raid step instead, and abort from service wait is not exercised")
		if !b.offered("raid", "redfish") {
			return
		}
		step = nodes.ServiceStep{Interface: nodes.InterfaceRAID, Step: "apply_configuration",
			Args: map[string]any{"raid_config": map[string]any{"logical_disks": []any{
				map[string]any{"size_gb": 100, "raid_level": "1", "is_root_volume": true}}}}}
	}
	err := nodes.ChangeProvisionState(b.ctx, b.c, id, nodes.ProvisionStateOpts{Target: nodes.TargetService,
		ServiceSteps: []nodes.ServiceStep{step}}).ExtractErr()
	if isGap(err) {
		b.gap("servicing (1.87 target service with service_steps): %v", err)
		return
	}
	if err != nil {
		t.Fatalf("provision service: %v", err)
	}
	n := b.settle(id)
	if n.ProvisionState == string(nodes.ServiceFail) && strings.Contains(n.LastError, "does not offer it") {
		b.gap("servicing: %s", n.LastError)
		// BMO's Service in service failed once the firmware spec is
		// gone: abort, back to active; then clear the maintenance.
		b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetAbort})
		n = b.wait(id, string(nodes.Active), string(nodes.ServiceFail))
		if n.Maintenance {
			if err := nodes.UnsetMaintenance(b.ctx, b.c, id).ExtractErr(); err != nil {
				t.Fatalf("UnsetMaintenance: %v", err)
			}
		}
		return
	}
	if n.ProvisionState != string(nodes.Active) || n.LastError != "" || n.Maintenance {
		t.Fatalf("after servicing: %s, last_error %q, maintenance %v", n.ProvisionState, n.LastError, n.Maintenance)
	}
	if name == "" {
		return
	}
	// BMO's HostFirmwareSettings status: the settings read back.
	settings, err := nodes.ListBIOSSettings(b.ctx, b.c, id, nil).Extract()
	if err != nil {
		t.Fatalf("ListBIOSSettings: %v", err)
	}
	got := "(missing)"
	for _, st := range settings {
		if st.Name == name {
			got = st.Value
		}
	}
	if got != value {
		t.Errorf("BIOS setting %s is %s after servicing, want %q", name, got, value)
	}
}

// settle polls until the node has no target state (the ramdisk playing
// the agent meanwhile) and returns it, failed or not.
func (b *bmo) settle(id string) *nodes.Node {
	b.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		n := b.get(id)
		if n.TargetProvisionState == "" && !strings.HasSuffix(n.ProvisionState, "ing") && !strings.HasSuffix(n.ProvisionState, "wait") {
			return n
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("node %s still %s (target %s)", id, n.ProvisionState, n.TargetProvisionState)
		}
		if b.disk != nil {
			b.disk.tick(b.ctx, id, n.ProvisionState)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// delete is BMO's Delete (realDelete without force): an available or
// manageable node loses a stale instance_uuid first; a node in another
// resting state is put in maintenance ("forcing deletion"); then
// nodes.Delete, 409 retried, and the node is gone.
func (b *bmo) delete(id string) {
	t := b.t
	t.Helper()
	n := b.get(id)
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Enroll:
	case nodes.Available, nodes.Manageable:
		if n.InstanceUUID != "" {
			b.patch(id, map[string]any{"/instance_uuid": nil})
		}
	default:
		if !n.Maintenance {
			if err := nodes.SetMaintenance(b.ctx, b.c, id, nodes.MaintenanceOpts{Reason: "forcing deletion in baremetal-operator"}).ExtractErr(); err != nil {
				t.Fatalf("SetMaintenance: %v", err)
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := nodes.Delete(b.ctx, b.c, id).ExtractErr()
		if err == nil {
			break
		}
		if !gophercloud.ResponseCodeIs(err, http.StatusConflict) || time.Now().After(deadline) {
			t.Fatalf("nodes.Delete of %s (%s): %v", id, n.ProvisionState, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := nodes.Get(b.ctx, b.c, id).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Errorf("Get after Delete: %v, want 404", err)
	}
}

// reach polls until the node is in state, whatever its target (a wait
// state), with no agent running.
func (b *bmo) reach(id, state string) *nodes.Node {
	b.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		n := b.get(id)
		if n.ProvisionState == state {
			return n
		}
		if strings.HasSuffix(n.ProvisionState, "failed") || time.Now().After(deadline) {
			b.t.Fatalf("node %s is %s, want %s: last_error %q", id, n.ProvisionState, state, n.LastError)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestMetal3BMOAbortsAndForcedDeletion runs BMO's aborts: inspection
// aborted in inspect wait (a new preprovisioning image: BMO restarts it
// when last_error says "aborted"), and a host deleted while its deploy
// waits for the agent (realDelete with force at 1.110: abort from wait
// call-back, then maintenance and delete).
func TestMetal3BMOAbortsAndForcedDeletion(t *testing.T) {
	bmcSim, bmcSrv := stacktest.StartBMC(t, sim.Options{Systems: 1, Seed: 5, SystemVirtualMedia: true})
	apiURL := newMetal3Stack(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, maxMinor := negotiate(t, ctx, apiURL)
	var gaps []string
	const iso = "http://images.metal3.test/ironic-python-agent.iso"
	macs := machineMACs(t, bmcSrv.URL, sim.SystemID(0))
	disk := &ramdisk{t: t, apiURL: apiURL, bmc: bmcSim, system: sim.SystemID(0), macs: macs, isoWant: iso}
	b := &bmo{t: t, ctx: ctx, c: c, gaps: &gaps}

	id := b.register("metal3~host-abort", bmcSrv.URL, sim.SystemID(0), macs[0]).UUID
	b.configure(id, iso, false)
	b.directDeploy(id)

	// Inspection: no agent answers; BMO aborts in inspect wait.
	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetInspect})
	b.reach(id, string(nodes.InspectWait))
	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetAbort})
	n := b.wait(id, string(nodes.InspectFail), string(nodes.InspectWait))
	if !strings.Contains(n.LastError, "aborted") {
		t.Errorf("inspection abort: last_error %q; BMO restarts inspection only when it contains \"aborted\"", n.LastError)
	}
	// BMO restarts inspection from inspect failed; this time the agent runs.
	b.disk = disk
	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetInspect})
	b.wait(id, string(nodes.Manageable), string(nodes.InspectFail), string(nodes.Inspecting), string(nodes.InspectWait))
	b.disk = nil

	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetProvide})
	b.wait(id, string(nodes.Available), string(nodes.Manageable))
	b.patch(id, map[string]any{
		"/instance_uuid":                            "0c6d8a43-7f25-4f0e-b6a9-2d1c3e4f5a67",
		"/instance_info/image_source":               "http://images.metal3.test/ubuntu.raw",
		"/instance_info/image_checksum":             "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"/driver_info/force_persistent_boot_device": "Default",
	})
	b.validate(id)
	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetActive, ConfigDrive: nodes.ConfigDrive{
		MetaData: map[string]any{"uuid": "0c6d8a43-7f25-4f0e-b6a9-2d1c3e4f5a67", "name": "host-abort"}}})
	b.reach(id, string(nodes.DeployWait))
	// The host is deleted while its deploy waits: with 1.110, abort.
	if maxMinor < 110 {
		t.Fatalf("the server offers 1.%d: BMO would tear the deploy down instead of aborting it", maxMinor)
	}
	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetAbort})
	// As Ironic, the abort waits for the running step (the agent's boot:
	// not abortable) to end: at the agent's first heartbeat, before it is
	// asked to write anything. BMO polls meanwhile.
	b.disk = disk
	n = b.wait(id, string(nodes.DeployFail), string(nodes.DeployWait), string(nodes.Deploying))
	if !strings.Contains(n.LastError, "aborted") || n.PowerState != "power off" {
		t.Errorf("deploy abort: last_error %q, power %q", n.LastError, n.PowerState)
	}
	if cmds := disk.commands(); slices.Contains(cmds, "deploy write_image") {
		t.Errorf("the aborted deploy still wrote the image: %v", cmds)
	}
	b.delete(id)
	for _, g := range gaps {
		t.Log("left out: " + g)
	}
}

// prepare is BMO's Prepare of a manageable host with hardware RAID
// volumes in its spec (startManualCleaning): setTargetRAIDCfg (the raid
// interface, then nodes.SetRAIDConfig with the first volume as root, no
// root device hints), then manual cleaning with buildManualCleaningSteps'
// raid delete_configuration and create_configuration. BIOS settings add a
// bios apply_configuration step once the redfish bios interface exists.
func (b *bmo) prepare(id string) {
	t := b.t
	var biosSteps []nodes.CleanStep
	if !b.offered("bios", "redfish") {
		b.gap("prepare's bios apply_configuration clean step needs the redfish bios interface")
	} else if name, value := b.biosChange(id); name != "" {
		// getNewFirmwareSettings: only the settings that differ.
		biosSteps = append(biosSteps, nodes.CleanStep{Interface: nodes.InterfaceBIOS, Step: "apply_configuration",
			Args: map[string]any{"settings": []map[string]any{{"name": name, "value": value}}}})
	}
	if !b.offered("raid", "redfish") {
		b.gap("prepare's raid delete_configuration/create_configuration clean steps need the redfish raid interface")
		if len(biosSteps) > 0 {
			b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetClean, CleanSteps: biosSteps})
			b.wait(id, string(nodes.Manageable), string(nodes.Manageable), string(nodes.Cleaning), string(nodes.CleanWait))
		}
		return
	}
	b.patch(id, map[string]any{"/raid_interface": "redfish"})
	size, root := 100, true
	err := nodes.SetRAIDConfig(b.ctx, b.c, id, nodes.RAIDConfigOpts{LogicalDisks: []nodes.LogicalDisk{
		{SizeGB: &size, RAIDLevel: nodes.RAID1, VolumeName: "root", IsRootVolume: &root},
	}}).ExtractErr()
	if err != nil {
		t.Fatalf("nodes.SetRAIDConfig: %v", err)
	}
	b.change(id, nodes.ProvisionStateOpts{Target: nodes.TargetClean, CleanSteps: append([]nodes.CleanStep{
		{Interface: nodes.InterfaceRAID, Step: "delete_configuration"},
		{Interface: nodes.InterfaceRAID, Step: "create_configuration"},
	}, biosSteps...)})
	n := b.wait(id, string(nodes.Manageable), string(nodes.Manageable), string(nodes.Cleaning), string(nodes.CleanWait))
	disks, _ := n.RAIDConfig["logical_disks"].([]any)
	if len(disks) != 1 {
		t.Fatalf("after prepare: raid_config %v, want the root volume", n.RAIDConfig)
	}
	if d, _ := disks[0].(map[string]any); d["raid_level"] != "1" || d["is_root_volume"] != true {
		t.Errorf("after prepare: logical disk %v", d)
	}
}

// findExisting is BMO's findExistingHost for a host not registered yet:
// nodes.Get by "namespace~name" and by the plain name answer 404, and no
// port has the boot MAC (getPorts with its fields).
func (b *bmo) findExisting(name, bootMAC string) {
	t := b.t
	t.Helper()
	_, plain, _ := strings.Cut(name, "~")
	for _, n := range []string{name, plain} {
		if _, err := nodes.Get(b.ctx, b.c, n).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			t.Fatalf("nodes.Get %q of an unregistered host: %v, want 404", n, err)
		}
	}
	pages, err := ports.List(b.c, ports.ListOpts{Address: bootMAC, Fields: []string{"node_uuid", "uuid", "address"}}).AllPages(b.ctx)
	if err != nil {
		t.Fatalf("ports.List address=%s: %v", bootMAC, err)
	}
	if got, err := ports.ExtractPorts(pages); err != nil || len(got) != 0 {
		t.Fatalf("ports with the new host's MAC: %v %v", got, err)
	}
}

// busyHosts is BMO's loadBusyHosts (HasCapacity for network-booted
// hosts): one list with its fields; virtual-media hosts are not counted.
func (b *bmo) busyHosts() map[string]string {
	t := b.t
	t.Helper()
	pages, err := nodes.List(b.c, nodes.ListOpts{Fields: []string{"uuid,name,provision_state,boot_interface"}}).AllPages(b.ctx)
	if err != nil {
		t.Fatalf("nodes.List fields: %v", err)
	}
	all, err := nodes.ExtractNodes(pages)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, n := range all {
		if n.UUID == "" || n.Name == "" || n.ProvisionState == "" || n.BootInterface == "" {
			t.Errorf("listed node without the fields asked for: %+v", n)
		}
		states[n.Name] = n.ProvisionState
	}
	return states
}

// directDeploy checks the node got direct, Ironic's default deploy
// interface, which BMO relies on: it leaves deploy_interface unset for
// image deploys (deployInterface is "" unless the image is a live ISO or a
// custom deploy), and clears it to return from ramdisk. Rivet's redfish
// default is ramdisk unless [conductor] default_deploy_interface = direct,
// as the stack sets it.
func (b *bmo) directDeploy(id string) {
	b.t.Helper()
	if dep := b.get(id).DeployInterface; dep != "direct" {
		b.t.Fatalf("a node created without deploy_interface got %q, want direct ([conductor] default_deploy_interface)", dep)
	}
}

// biosChange picks a writable BIOS setting with allowable values and a
// value it does not have (what a HostFirmwareSettings spec would ask
// for), from nodes.ListBIOSSettings with detail as BMO reads the schema.
func (b *bmo) biosChange(id string) (name, value string) {
	b.t.Helper()
	settings, err := nodes.ListBIOSSettings(b.ctx, b.c, id, nodes.ListBIOSSettingsOpts{Detail: true}).Extract()
	if err != nil {
		b.t.Fatalf("ListBIOSSettings detail: %v", err)
	}
	for _, st := range settings {
		if (st.ReadOnly != nil && *st.ReadOnly) || len(st.AllowableValues) < 2 {
			continue
		}
		for _, v := range st.AllowableValues {
			if v != st.Value {
				return st.Name, v
			}
		}
	}
	b.gap("no writable BIOS setting with allowable values among %d: the BIOS steps are left out", len(settings))
	return "", ""
}

package objects

import (
	"encoding/json"
	"time"
)

// samples returns, per kind, a representative fully populated object as
// loaded from the DB (snapshot taken) with one field changed since: what
// the golden fixtures and round trips use. Numbers inside maps are json.Number,
// as they come back from JSON.
func samples() map[string]func() Object {
	created := time.Date(2026, 3, 14, 9, 26, 53, 589000000, time.UTC)
	updated := time.Date(2026, 3, 15, 10, 0, 0, 0, time.UTC)
	return map[string]func() Object{
		"Node": func() Object {
			return &Node{
				ID: 7, UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", Name: ptr("rack1-node7"),
				ChassisID: ptr(int64(2)), Driver: "redfish",
				DriverInfo: map[string]any{
					"redfish_address": "https://10.0.0.7", "redfish_system_id": "/redfish/v1/Systems/1",
					"redfish_username": "admin", "redfish_password": "secret", "redfish_verify_ca": false,
				},
				DriverInternalInfo: map[string]any{"agent_url": "http://10.1.0.7:9999", "clean_steps": []any{"erase"}},
				Extra:              map[string]any{"rack": "r1", "slot": json.Number("7")},
				InstanceInfo:       map[string]any{"image_source": "http://images/ubuntu.iso", "root_gb": json.Number("40")},
				Properties:         map[string]any{"cpus": json.Number("32"), "memory_mb": json.Number("131072"), "cpu_arch": "x86_64"},
				CleanStep:          map[string]any{"interface": "deploy", "step": "erase_devices", "priority": json.Number("10")},
				RAIDConfig:         map[string]any{"logical_disks": []any{map[string]any{"size_gb": json.Number("100"), "raid_level": "1"}}},
				TargetRAIDConfig:   map[string]any{"logical_disks": []any{map[string]any{"size_gb": "MAX", "raid_level": "5"}}},
				InstanceUUID:       ptr("5a4a8a0e-64b7-4e0f-9e8c-0a1e0f0e9b11"),
				LastError:          ptr("power sync failed once"),
				Maintenance:        true, MaintenanceReason: ptr("fan replacement"),
				PowerState: ptr("power on"), TargetPowerState: ptr("power off"),
				ProvisionState: "active", TargetProvisionState: ptr("deleted"),
				ProvisionUpdatedAt:  &updated,
				InspectionStartedAt: &created, InspectionFinishedAt: &updated,
				NetworkInterface: ptr("noop"), ResourceClass: ptr("baremetal-large"),
				ConsoleEnabled: true, ConductorAffinity: ptr(int64(3)), ConductorGroup: "rack1",
				Reservation: ptr("conductor-1.example.com"),
				CreatedAt:   created, UpdatedAt: &updated,
				BootInterface: ptr("redfish-virtual-media"), ConsoleInterface: ptr("no-console"),
				DeployInterface: ptr("ramdisk"), InspectInterface: ptr("redfish"),
				ManagementInterface: ptr("redfish"), PowerInterface: ptr("redfish"),
				RAIDInterface: ptr("no-raid"), VendorInterface: ptr("no-vendor"),
				StorageInterface: ptr("noop"), RescueInterface: ptr("no-rescue"),
				BIOSInterface: ptr("no-bios"), FirmwareInterface: ptr("no-firmware"),
				Fault: ptr("power failure"), DeployStep: map[string]any{"step": "deploy", "interface": "deploy", "priority": json.Number("100")},
				AutomatedClean: ptr(false), Protected: true, ProtectedReason: ptr("production"),
				Description: ptr("rack 4, slot 2"), Retired: true, RetiredReason: ptr("end of life"),
				Shard: ptr("shard-1"), ParentNode: ptr("0d2c9a67-8a3f-4d5e-9b1a-2c3d4e5f6a7b"),
				DisablePowerOff: true, InstanceName: ptr("web-1"), Health: ptr("OK"),
				AllocationID: ptr(int64(5)),
				Owner:        ptr("f3b2c1d0a9e84f7b8c6d5e4f3a2b1c0d"), Lessee: ptr("tenant-b"),
				NetworkData: map[string]any{"links": []any{map[string]any{"id": "eth0", "type": "phy",
					"ethernet_mac_address": "52:54:00:12:34:56"}}, "networks": []any{}, "services": []any{}},
				ServiceStep: map[string]any{"step": "apply_configuration", "interface": "raid", "args": map[string]any{}},
			}
		},
		"Allocation": func() Object {
			return &Allocation{
				ID: 5, UUID: "5a4a8a0e-64b7-4e0f-9e8c-0a1e0f0e9b11", Name: ptr("rack1-node7"),
				NodeID: ptr(int64(7)), State: "active", LastError: ptr("none of the requested nodes were free once"),
				ResourceClass: ptr("baremetal-large"), Traits: []string{"CUSTOM_GPU", "HW_CPU_X86_VMX"},
				CandidateNodes: []string{"1be26c0b-03f2-4d2e-ae87-c02d7f33c123"}, Extra: map[string]any{"flavor": "large"},
				ConductorAffinity: ptr(int64(3)), Owner: ptr("project-a"),
				CreatedAt: created, UpdatedAt: &updated,
			}
		},
		"Port": func() Object {
			return &Port{
				ID: 11, UUID: "9a1b6f9e-0d39-4a63-8a59-1d1f8c7e2a01", Address: "52:54:00:12:34:56",
				NodeID: 7, PortgroupID: ptr(int64(4)),
				Extra:               map[string]any{"label": "eth0"},
				LocalLinkConnection: map[string]any{"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Ethernet1/7", "switch_info": "tor1"},
				PXEEnabled:          false,
				InternalInfo:        map[string]any{"tenant_vif_port_id": "vif-1"},
				CreatedAt:           created, UpdatedAt: &updated,
				PhysicalNetwork: ptr("physnet1"), IsSmartNIC: true, Name: ptr("eth0"),
				Description: ptr("first NIC"), Vendor: ptr("mellanox"), Category: ptr("data"),
			}
		},
		"Portgroup": func() Object {
			return &Portgroup{
				ID: 4, UUID: "3c8a7d0e-5f6b-4c2d-9e1a-7b8c9d0e1f20", Name: ptr("bond0"),
				Address: ptr("52:54:00:aa:bb:cc"), NodeID: 7,
				Extra:                    map[string]any{"owner": "netops"},
				InternalInfo:             map[string]any{"tenant_vif_port_id": "vif-2"},
				StandalonePortsSupported: false, Mode: ptr("802.3ad"),
				Properties: map[string]any{"miimon": "100", "xmit_hash_policy": "layer3+4"},
				CreatedAt:  created, UpdatedAt: &updated,
				PhysicalNetwork: ptr("physnet1"), Category: ptr("bond"),
			}
		},
		"Chassis": func() Object {
			return &Chassis{
				ID: 2, UUID: "e6c0a3f1-8b2d-4e5f-a6b7-c8d9e0f1a2b3", Description: ptr("rack 1, row B"),
				Extra:     map[string]any{"datacenter": "par1"},
				CreatedAt: created, UpdatedAt: &updated,
			}
		},
		"Conductor": func() Object {
			return &Conductor{
				ID: 3, Hostname: "conductor-1.example.com", ConductorGroup: "rack1", Online: true,
				Drivers:   []string{"fake-hardware", "ipmi", "redfish"},
				CreatedAt: created, UpdatedAt: &updated,
			}
		},
		"VolumeConnector": func() Object {
			return &VolumeConnector{
				ID: 5, UUID: "0d2b7c3e-6a1f-4b8e-9c5d-2e3f4a5b6c70", NodeID: 7,
				Type: "iqn", ConnectorID: "iqn.2017-07.org.openstack:01:d9a51732c3f",
				Extra:     map[string]any{"initiator": "open-iscsi"},
				CreatedAt: created, UpdatedAt: &updated,
			}
		},
		"VolumeTarget": func() Object {
			return &VolumeTarget{
				ID: 6, UUID: "7f3e2d1c-0b9a-4876-8543-210fedcba987", NodeID: 7,
				VolumeType: "iscsi", BootIndex: 0, VolumeID: "04452bed-5367-4202-8bf5-de4335ac56d2",
				Properties: map[string]any{"target_lun": json.Number("0"), "auth_password": "s3cret"},
				Extra:      map[string]any{"pool": "ssd"},
				CreatedAt:  created, UpdatedAt: &updated,
			}
		},
		"Trait": func() Object {
			return &Trait{ID: 5, NodeID: 7, Trait: "CUSTOM_RAID5", CreatedAt: created, UpdatedAt: &updated}
		},
		"DeployTemplate": func() Object {
			return &DeployTemplate{
				ID: 6, UUID: "bbb45f41-d4bc-4307-8d1d-32f95ce1e920", Name: "CUSTOM_HYPERTHREADING_ON",
				Steps: []map[string]any{{"interface": "bios", "step": "apply_configuration", "priority": json.Number("150"),
					"args": map[string]any{"settings": []any{map[string]any{"name": "LogicalProc", "value": "Enabled"}}}}},
				Extra:     map[string]any{"foo": "bar"},
				CreatedAt: created, UpdatedAt: &updated,
			}
		},
		"Runbook": func() Object {
			return &Runbook{
				ID: 8, UUID: "fc6b1709-8dd5-86b0-2d34-5203d1c29127", Name: "CUSTOM_AWESOME",
				Steps: []map[string]any{{"interface": "bios", "step": "apply_configuration", "order": json.Number("1"),
					"args": map[string]any{"settings": []any{map[string]any{"name": "LogicalProc", "value": "Enabled"}}}}},
				DisableRamdisk: true, Extra: map[string]any{}, Public: false, Owner: ptr("f3c0a9d0e7b24a5c9e1d2b3c4d5e6f70"),
				CreatedAt: created, UpdatedAt: &updated,
			}
		},
		"NodeHistory": func() Object {
			return &NodeHistory{
				ID: 21, UUID: "e5840e39-b4ba-4a93-8071-cff9aa2c9633", NodeID: 7,
				Conductor: ptr("conductor-1.example.com"), EventType: ptr("provisioning"),
				Severity: ptr("ERROR"), Event: ptr("Failed to deploy: image not found (request req-3f1c)"), UserName: ptr("alice"),
				CreatedAt: created, UpdatedAt: &updated,
			}
		},
		"BIOSSetting": func() Object {
			return &BIOSSetting{NodeID: 7, Name: "ProcVirtualization", Value: ptr("Enabled"), CreatedAt: created, UpdatedAt: &updated,
				AttributeType: ptr("Enumeration"), AllowableValues: []string{"Enabled", "Disabled"}, ResetRequired: ptr(true),
				ReadOnly: ptr(false), Unique: ptr(false), LowerBound: ptr(int64(0)), UpperBound: ptr(int64(1)),
				MinLength: ptr(int64(0)), MaxLength: ptr(int64(8))}
		},
		"FirmwareComponent": func() Object {
			return &FirmwareComponent{ID: 3, NodeID: 7, Component: "bios", InitialVersion: "1.0.0", CurrentVersion: ptr("2.1.0"),
				LastVersionFlashed: ptr("2.1.0"), CreatedAt: created, UpdatedAt: &updated}
		},
		"InspectionRule": func() Object {
			return &InspectionRule{
				ID: 9, UUID: "783bf33a-a8e3-1e23-a645-1e95a1f95186", Priority: 100, Description: ptr("BMC credentials"),
				Sensitive: true, Phase: "main",
				Conditions: []map[string]any{{"op": "contains", "args": map[string]any{"value": "{inventory[system_vendor][manufacturer]}", "regex": "(?i)dell"}}},
				Actions: []map[string]any{{"op": "set-attribute", "args": map[string]any{"path": "/driver_info/redfish_address", "value": "https://{inventory[bmc_address]}"}},
					{"op": "add-trait", "args": map[string]any{"name": "{item}"}, "loop": []any{"CUSTOM_A", "CUSTOM_B"}}},
				CreatedAt: created, UpdatedAt: &updated,
			}
		},
		"Widget": func() Object {
			return &Widget{ID: 1, Name: "w1", Extra: map[string]any{}, Meta: map[string]any{"k": "v"}, Color: ptr("red")}
		},
		"Gadget": func() Object {
			return &Gadget{ID: 1, New: 10, Affected: 13}
		},
	}
}

// sampleChanged is the field sample marks changed after loading.
var sampleChanged = map[string]string{
	"Node": "maintenance", "Port": "pxe_enabled", "Portgroup": "mode", "Chassis": "description",
	"Conductor": "online", "VolumeConnector": "extra", "VolumeTarget": "boot_index", "Widget": "meta", "Gadget": "new",
	"Trait": "trait", "DeployTemplate": "steps", "Runbook": "public", "InspectionRule": "priority", "Allocation": "extra",
	"NodeHistory": "event", "BIOSSetting": "value", "FirmwareComponent": "current_version",
}

// loadedSample returns kind's sample as if loaded (snapshot taken) with one
// field changed since.
func loadedSample(r *Registry, kind string) Object {
	obj := samples()[kind]()
	if err := r.ResetChanges(obj); err != nil {
		panic(err)
	}
	if err := r.MarkChanged(obj, sampleChanged[kind]); err != nil {
		panic(err)
	}
	return obj
}

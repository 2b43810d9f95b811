package objects

import (
	"time"

	"github.com/rivetmetal/rivet/core/version"
)

// v is version.MustParse, short for the declarations below.
func v(s string) version.Version { return version.MustParse(s) }

// Node is a bare-metal server (latest version: see NodeKind). Field
// comments name the version a field appeared in when it is not 1.0.
type Node struct {
	Base
	// ID is the internal primary key.
	ID   int64   `rivet:"id"`
	UUID string  `rivet:"uuid"`
	Name *string `rivet:"name"`
	// ChassisID is the ID of the Chassis holding the node, if any.
	ChassisID *int64 `rivet:"chassis_id"`
	// Driver is the hardware type ("redfish", "ipmi", "fake-hardware").
	Driver             string         `rivet:"driver"`
	DriverInfo         map[string]any `rivet:"driver_info"`
	DriverInternalInfo map[string]any `rivet:"driver_internal_info"`
	Extra              map[string]any `rivet:"extra"`
	InstanceInfo       map[string]any `rivet:"instance_info"`
	Properties         map[string]any `rivet:"properties"`
	CleanStep          map[string]any `rivet:"clean_step"`
	RAIDConfig         map[string]any `rivet:"raid_config"`
	TargetRAIDConfig   map[string]any `rivet:"target_raid_config"`
	InstanceUUID       *string        `rivet:"instance_uuid"`
	LastError          *string        `rivet:"last_error"`
	Maintenance        bool           `rivet:"maintenance"`
	MaintenanceReason  *string        `rivet:"maintenance_reason"`
	PowerState         *string        `rivet:"power_state"`
	TargetPowerState   *string        `rivet:"target_power_state"`
	// ProvisionState defaults to "enroll", as in Ironic.
	ProvisionState       string     `rivet:"provision_state"`
	TargetProvisionState *string    `rivet:"target_provision_state"`
	ProvisionUpdatedAt   *time.Time `rivet:"provision_updated_at"`
	InspectionStartedAt  *time.Time `rivet:"inspection_started_at"`
	InspectionFinishedAt *time.Time `rivet:"inspection_finished_at"`
	NetworkInterface     *string    `rivet:"network_interface"`
	ResourceClass        *string    `rivet:"resource_class"`
	ConsoleEnabled       bool       `rivet:"console_enabled"`
	// ConductorAffinity is the ID of the conductor that last deployed the node.
	ConductorAffinity *int64 `rivet:"conductor_affinity"`
	ConductorGroup    string `rivet:"conductor_group"`
	// Reservation is the hostname of the conductor holding the node's lock.
	Reservation *string    `rivet:"reservation"`
	CreatedAt   time.Time  `rivet:"created_at"`
	UpdatedAt   *time.Time `rivet:"updated_at"`

	// The implementation of each hardware interface the node uses (1.1,
	// API 1.31); nil means the hardware type's default (core/catalog).
	BootInterface       *string `rivet:"boot_interface"`
	ConsoleInterface    *string `rivet:"console_interface"`
	DeployInterface     *string `rivet:"deploy_interface"`
	InspectInterface    *string `rivet:"inspect_interface"`
	ManagementInterface *string `rivet:"management_interface"`
	PowerInterface      *string `rivet:"power_interface"`
	RAIDInterface       *string `rivet:"raid_interface"`
	VendorInterface     *string `rivet:"vendor_interface"`

	// Node 1.2 (release 0.3): the fields of API 1.33-1.109 that need no
	// other object. The four interfaces are nil for the hardware type's
	// default, as the 1.1 ones.
	StorageInterface  *string `rivet:"storage_interface"`
	RescueInterface   *string `rivet:"rescue_interface"`
	BIOSInterface     *string `rivet:"bios_interface"`
	FirmwareInterface *string `rivet:"firmware_interface"`
	// Fault is why the conductor put the node in maintenance (API 1.42),
	// one of the Fault* values; cleared when maintenance ends.
	Fault *string `rivet:"fault"`
	// DeployStep is the deploy step running (API 1.44), {} when none.
	DeployStep map[string]any `rivet:"deploy_step"`
	// AutomatedClean overrides [conductor] automated_clean for this node
	// when set (API 1.47).
	AutomatedClean *bool `rivet:"automated_clean"`
	// Protected nodes refuse undeploy, rebuild and delete (API 1.48).
	Protected       bool    `rivet:"protected"`
	ProtectedReason *string `rivet:"protected_reason"`
	Description     *string `rivet:"description"`
	// Retired nodes go to manageable instead of available after cleaning
	// (API 1.61).
	Retired       bool    `rivet:"retired"`
	RetiredReason *string `rivet:"retired_reason"`
	Shard         *string `rivet:"shard"`
	// ParentNode is the UUID of the node this one is a child of (API 1.83).
	ParentNode *string `rivet:"parent_node"`
	// DisablePowerOff refuses every power-off of the node (API 1.95).
	DisablePowerOff bool    `rivet:"disable_power_off"`
	InstanceName    *string `rivet:"instance_name"`
	// Health is the hardware's health as the BMC reports it (API 1.109).
	Health *string `rivet:"health"`
	// AllocationID is the id of the Allocation that reserved the node
	// (1.2, API 1.52 shows its UUID as allocation_uuid).
	AllocationID *int64 `rivet:"allocation_id"`
	// Owner and Lessee (1.2, API 1.50 and 1.65) are the projects the node
	// belongs to and is leased to: project-scoped users see and act on
	// only the nodes one of them names (docs/admin/security.md).
	Owner  *string `rivet:"owner"`
	Lessee *string `rivet:"lessee"`
	// NetworkData is the node's static network configuration in
	// OpenStack's network_data.json layout (1.2, API 1.66): the config
	// drive carries it when the deploy's own configdrive has none. {}
	// when unset.
	NetworkData map[string]any `rivet:"network_data"`
	// ServiceStep is the service step running (1.2, API 1.87), {} when
	// none.
	ServiceStep map[string]any `rivet:"service_step"`
}

// Faults the conductor records in Node.Fault, as Ironic's
// ironic.common.faults.
const (
	FaultPowerFailure   = "power failure"
	FaultCleanFailure   = "clean failure"
	FaultRescueAbort    = "rescue abort failure"
	FaultServiceFailure = "service failure"
)

// ValidFaults are the faults ?fault= accepts, in Ironic's order.
var ValidFaults = []string{FaultPowerFailure, FaultCleanFailure, FaultRescueAbort, FaultServiceFailure}

// InterfaceField returns the field holding the node's implementation of
// the hardware interface iface ("deploy" → DeployInterface, "network" →
// NetworkInterface), or nil for an interface type the node has no field
// for.
func (n *Node) InterfaceField(iface string) **string {
	switch iface {
	case "boot":
		return &n.BootInterface
	case "console":
		return &n.ConsoleInterface
	case "deploy":
		return &n.DeployInterface
	case "inspect":
		return &n.InspectInterface
	case "management":
		return &n.ManagementInterface
	case "network":
		return &n.NetworkInterface
	case "power":
		return &n.PowerInterface
	case "raid":
		return &n.RAIDInterface
	case "vendor":
		return &n.VendorInterface
	case "storage":
		return &n.StorageInterface
	case "rescue":
		return &n.RescueInterface
	case "bios":
		return &n.BIOSInterface
	case "firmware":
		return &n.FirmwareInterface
	}
	return nil
}

// Kind implements Object.
func (*Node) Kind() string { return "Node" }

// NodeKind declares Node for Register.
func NodeKind() Kind {
	return Kind{
		Name: "Node",
		New:  func() Object { return new(Node) },
		// 1.1 (release 0.2) adds the per-node interface implementations;
		// additive, so the field table converts both ways. 1.2 (release 0.3)
		// adds the fields of API 1.33 and later, additive too.
		Versions: []Step{{Version: v("1.0")}, {Version: v("1.1")}, {Version: v("1.2")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "uuid", Since: v("1.0")},
			{Name: "name", Since: v("1.0"), Nullable: true},
			{Name: "chassis_id", Since: v("1.0"), Nullable: true},
			{Name: "driver", Since: v("1.0")},
			{Name: "driver_info", Since: v("1.0"), Default: map[string]any{}},
			{Name: "driver_internal_info", Since: v("1.0"), Default: map[string]any{}},
			{Name: "extra", Since: v("1.0"), Default: map[string]any{}},
			{Name: "instance_info", Since: v("1.0"), Default: map[string]any{}},
			{Name: "properties", Since: v("1.0"), Default: map[string]any{}},
			{Name: "clean_step", Since: v("1.0"), Default: map[string]any{}},
			{Name: "raid_config", Since: v("1.0"), Default: map[string]any{}},
			{Name: "target_raid_config", Since: v("1.0"), Default: map[string]any{}},
			{Name: "instance_uuid", Since: v("1.0"), Nullable: true},
			{Name: "last_error", Since: v("1.0"), Nullable: true},
			{Name: "maintenance", Since: v("1.0"), Default: false},
			{Name: "maintenance_reason", Since: v("1.0"), Nullable: true},
			{Name: "power_state", Since: v("1.0"), Nullable: true},
			{Name: "target_power_state", Since: v("1.0"), Nullable: true},
			{Name: "provision_state", Since: v("1.0"), Default: "enroll"},
			{Name: "target_provision_state", Since: v("1.0"), Nullable: true},
			{Name: "provision_updated_at", Since: v("1.0"), Nullable: true},
			{Name: "inspection_started_at", Since: v("1.0"), Nullable: true},
			{Name: "inspection_finished_at", Since: v("1.0"), Nullable: true},
			{Name: "network_interface", Since: v("1.0"), Nullable: true},
			{Name: "resource_class", Since: v("1.0"), Nullable: true},
			{Name: "console_enabled", Since: v("1.0"), Default: false},
			{Name: "conductor_affinity", Since: v("1.0"), Nullable: true},
			{Name: "conductor_group", Since: v("1.0"), Default: ""},
			{Name: "reservation", Since: v("1.0"), Nullable: true},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
			{Name: "boot_interface", Since: v("1.1"), Nullable: true},
			{Name: "console_interface", Since: v("1.1"), Nullable: true},
			{Name: "deploy_interface", Since: v("1.1"), Nullable: true},
			{Name: "inspect_interface", Since: v("1.1"), Nullable: true},
			{Name: "management_interface", Since: v("1.1"), Nullable: true},
			{Name: "power_interface", Since: v("1.1"), Nullable: true},
			{Name: "raid_interface", Since: v("1.1"), Nullable: true},
			{Name: "vendor_interface", Since: v("1.1"), Nullable: true},
			{Name: "storage_interface", Since: v("1.2"), Nullable: true},
			{Name: "rescue_interface", Since: v("1.2"), Nullable: true},
			{Name: "bios_interface", Since: v("1.2"), Nullable: true},
			{Name: "firmware_interface", Since: v("1.2"), Nullable: true},
			{Name: "fault", Since: v("1.2"), Nullable: true},
			{Name: "deploy_step", Since: v("1.2"), Default: map[string]any{}},
			{Name: "automated_clean", Since: v("1.2"), Nullable: true},
			{Name: "protected", Since: v("1.2"), Default: false},
			{Name: "protected_reason", Since: v("1.2"), Nullable: true},
			{Name: "description", Since: v("1.2"), Nullable: true},
			{Name: "retired", Since: v("1.2"), Default: false},
			{Name: "retired_reason", Since: v("1.2"), Nullable: true},
			{Name: "shard", Since: v("1.2"), Nullable: true},
			{Name: "parent_node", Since: v("1.2"), Nullable: true},
			{Name: "disable_power_off", Since: v("1.2"), Default: false},
			{Name: "instance_name", Since: v("1.2"), Nullable: true},
			{Name: "health", Since: v("1.2"), Nullable: true},
			{Name: "allocation_id", Since: v("1.2"), Nullable: true},
			{Name: "owner", Since: v("1.2"), Nullable: true},
			{Name: "lessee", Since: v("1.2"), Nullable: true},
			{Name: "network_data", Since: v("1.2"), Default: map[string]any{}},
			{Name: "service_step", Since: v("1.2"), Default: map[string]any{}},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.2-bee71cf959fdbc4754714def1024d159",
	}
}

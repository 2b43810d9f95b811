package db

import (
	"github.com/uptrace/bun"
)

// Node is a row of the nodes table: an enrolled bare-metal server. Field and
// column names are the canonical names of the Node object's fields. JSON
// columns hold {} when empty. Nullable columns are pointers or bun.NullTime.
type Node struct {
	bun.BaseModel `bun:"table:nodes,alias:n"`

	ID                   int64        `bun:"id,pk,autoincrement"`
	UUID                 string       `bun:"uuid,notnull"`
	Name                 *string      `bun:"name"`
	ChassisID            *int64       `bun:"chassis_id"`
	Driver               string       `bun:"driver,notnull"`
	DriverInfo           JSONObject   `bun:"driver_info"`
	DriverInternalInfo   JSONObject   `bun:"driver_internal_info"`
	Extra                JSONObject   `bun:"extra"`
	InstanceInfo         JSONObject   `bun:"instance_info"`
	Properties           JSONObject   `bun:"properties"`
	CleanStep            JSONObject   `bun:"clean_step"`
	RAIDConfig           JSONObject   `bun:"raid_config"`
	TargetRAIDConfig     JSONObject   `bun:"target_raid_config"`
	InstanceUUID         *string      `bun:"instance_uuid"`
	LastError            *string      `bun:"last_error"`
	Maintenance          bool         `bun:"maintenance,notnull"`
	MaintenanceReason    *string      `bun:"maintenance_reason"`
	PowerState           *string      `bun:"power_state"`
	TargetPowerState     *string      `bun:"target_power_state"`
	ProvisionState       *string      `bun:"provision_state"`
	TargetProvisionState *string      `bun:"target_provision_state"`
	ProvisionUpdatedAt   bun.NullTime `bun:"provision_updated_at"`
	InspectionStartedAt  bun.NullTime `bun:"inspection_started_at"`
	InspectionFinishedAt bun.NullTime `bun:"inspection_finished_at"`
	NetworkInterface     *string      `bun:"network_interface"`
	ResourceClass        *string      `bun:"resource_class"`
	ConsoleEnabled       bool         `bun:"console_enabled,notnull"`
	// ConductorAffinity is the id of the conductor that last deployed the
	// node (Ironic's takeover bookkeeping).
	ConductorAffinity *int64 `bun:"conductor_affinity"`
	ConductorGroup    string `bun:"conductor_group,notnull"`

	// Reservation is the lease holder (a conductor hostname), nil when the
	// node is free. Only the lease functions write the three lease columns.
	Reservation *string `bun:"reservation"`
	// ReservationExpiresAt is when the lease lapses unless renewed.
	ReservationExpiresAt bun.NullTime `bun:"reservation_expires_at"`
	// ReservationEpoch is the fencing counter, bumped by every acquisition.
	ReservationEpoch int64 `bun:"reservation_epoch,notnull"`

	// The node's hardware interface implementations (Node 1.1); NULL in
	// rows written at Node 1.0, until the backfill_node_interfaces online
	// migration fills them.
	BootInterface       *string `bun:"boot_interface"`
	ConsoleInterface    *string `bun:"console_interface"`
	DeployInterface     *string `bun:"deploy_interface"`
	InspectInterface    *string `bun:"inspect_interface"`
	ManagementInterface *string `bun:"management_interface"`
	PowerInterface      *string `bun:"power_interface"`
	RAIDInterface       *string `bun:"raid_interface"`
	VendorInterface     *string `bun:"vendor_interface"`

	// The fields of Node 1.2 (release 0.3, API 1.33-1.109). Every column
	// is nullable (the DB change policy); NULL reads as the field's
	// default (false for the booleans, {} for deploy_step).
	StorageInterface  *string    `bun:"storage_interface"`
	RescueInterface   *string    `bun:"rescue_interface"`
	BIOSInterface     *string    `bun:"bios_interface"`
	FirmwareInterface *string    `bun:"firmware_interface"`
	Fault             *string    `bun:"fault"`
	DeployStep        JSONObject `bun:"deploy_step"`
	AutomatedClean    *bool      `bun:"automated_clean"`
	Protected         *bool      `bun:"protected"`
	ProtectedReason   *string    `bun:"protected_reason"`
	Description       *string    `bun:"description"`
	Retired           *bool      `bun:"retired"`
	RetiredReason     *string    `bun:"retired_reason"`
	Shard             *string    `bun:"shard"`
	ParentNode        *string    `bun:"parent_node"`
	DisablePowerOff   *bool      `bun:"disable_power_off"`
	InstanceName      *string    `bun:"instance_name"`
	Health            *string    `bun:"health"`
	// AllocationID is the allocation that reserved the node (Node 1.2).
	AllocationID *int64 `bun:"allocation_id"`
	// The projects owning and leasing the node (Node 1.2); NULL for none.
	Owner  *string `bun:"owner"`
	Lessee *string `bun:"lessee"`
	// NetworkData is the node's network_data.json (Node 1.2, API 1.66);
	// NULL reads as {}.
	NetworkData JSONObject `bun:"network_data"`
	// ServiceStep is the service step running (Node 1.2); NULL reads as {}.
	ServiceStep JSONObject `bun:"service_step"`

	Timestamps
	// Version is the Node object version the row was written at.
	Version *string `bun:"version"`
}

package objects

import "time"

// VolumeConnector is a node's endpoint for remote volumes: an iSCSI
// initiator name, an IP or MAC address, a Fibre Channel WWNN or WWPN
// (Ironic's volume connector, REST API 1.32).
type VolumeConnector struct {
	Base
	// ID is the internal primary key.
	ID   int64  `rivet:"id"`
	UUID string `rivet:"uuid"`
	// NodeID is the ID of the Node the connector belongs to.
	NodeID int64 `rivet:"node_id"`
	// Type is the kind of ConnectorID ("iqn", "ip", "mac", "wwnn",
	// "wwpn", "port", "portgroup"); with it, unique.
	Type        string         `rivet:"type"`
	ConnectorID string         `rivet:"connector_id"`
	Extra       map[string]any `rivet:"extra"`
	CreatedAt   time.Time      `rivet:"created_at"`
	UpdatedAt   *time.Time     `rivet:"updated_at"`
}

// Kind implements Object.
func (*VolumeConnector) Kind() string { return "VolumeConnector" }

// VolumeConnectorKind declares VolumeConnector for Register.
func VolumeConnectorKind() Kind {
	return Kind{
		Name:     "VolumeConnector",
		New:      func() Object { return new(VolumeConnector) },
		Versions: []Step{{Version: v("1.0")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "uuid", Since: v("1.0")},
			{Name: "node_id", Since: v("1.0")},
			{Name: "type", Since: v("1.0")},
			{Name: "connector_id", Since: v("1.0")},
			{Name: "extra", Since: v("1.0"), Default: map[string]any{}},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.0-13ed0d65d03b316974a68bd2eb771b94",
	}
}

// VolumeTarget is a remote volume a node boots from or attaches
// (Ironic's volume target, REST API 1.32).
type VolumeTarget struct {
	Base
	// ID is the internal primary key.
	ID   int64  `rivet:"id"`
	UUID string `rivet:"uuid"`
	// NodeID is the ID of the Node the target belongs to.
	NodeID int64 `rivet:"node_id"`
	// VolumeType is the volume's protocol ("iscsi", "fibre_channel", ...).
	VolumeType string `rivet:"volume_type"`
	// Properties are the connection details the storage service returns.
	Properties map[string]any `rivet:"properties"`
	// BootIndex orders a node's targets; 0 is the boot volume. Unique per
	// node.
	BootIndex int64 `rivet:"boot_index"`
	// VolumeID is the volume's ID in the storage service.
	VolumeID  string         `rivet:"volume_id"`
	Extra     map[string]any `rivet:"extra"`
	CreatedAt time.Time      `rivet:"created_at"`
	UpdatedAt *time.Time     `rivet:"updated_at"`
}

// Kind implements Object.
func (*VolumeTarget) Kind() string { return "VolumeTarget" }

// VolumeTargetKind declares VolumeTarget for Register.
func VolumeTargetKind() Kind {
	return Kind{
		Name:     "VolumeTarget",
		New:      func() Object { return new(VolumeTarget) },
		Versions: []Step{{Version: v("1.0")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "uuid", Since: v("1.0")},
			{Name: "node_id", Since: v("1.0")},
			{Name: "volume_type", Since: v("1.0")},
			{Name: "properties", Since: v("1.0"), Default: map[string]any{}},
			{Name: "boot_index", Since: v("1.0")},
			{Name: "volume_id", Since: v("1.0")},
			{Name: "extra", Since: v("1.0"), Default: map[string]any{}},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.0-5d82f27b39a4beaa8b7a960b900a7573",
	}
}

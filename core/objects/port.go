package objects

import "time"

// Port is a network interface of a Node, known by its MAC address.
type Port struct {
	Base
	// ID is the internal primary key.
	ID   int64  `rivet:"id"`
	UUID string `rivet:"uuid"`
	// Address is the MAC address.
	Address string `rivet:"address"`
	// NodeID is the ID of the Node the port belongs to.
	NodeID int64 `rivet:"node_id"`
	// PortgroupID is the ID of the Portgroup the port is in, if any.
	PortgroupID         *int64         `rivet:"portgroup_id"`
	Extra               map[string]any `rivet:"extra"`
	LocalLinkConnection map[string]any `rivet:"local_link_connection"`
	// PXEEnabled defaults to true, as in Ironic.
	PXEEnabled   bool           `rivet:"pxe_enabled"`
	InternalInfo map[string]any `rivet:"internal_info"`
	CreatedAt    time.Time      `rivet:"created_at"`
	UpdatedAt    *time.Time     `rivet:"updated_at"`
	// PhysicalNetwork is the network the port is wired to (1.1, REST API
	// 1.34); every port of a portgroup has the same.
	PhysicalNetwork *string `rivet:"physical_network"`
	// IsSmartNIC marks a Smart NIC port (1.1, REST API 1.53).
	IsSmartNIC bool `rivet:"is_smartnic"`
	// Name is unique when set (1.1, REST API 1.88).
	Name *string `rivet:"name"`
	// Description (REST API 1.97), Vendor (1.100) and Category (1.101) are
	// free texts (1.1).
	Description *string `rivet:"description"`
	Vendor      *string `rivet:"vendor"`
	Category    *string `rivet:"category"`
}

// Kind implements Object.
func (*Port) Kind() string { return "Port" }

// PortKind declares Port for Register.
func PortKind() Kind {
	return Kind{
		Name:     "Port",
		New:      func() Object { return new(Port) },
		Versions: []Step{{Version: v("1.0")}, {Version: v("1.1")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "uuid", Since: v("1.0")},
			{Name: "address", Since: v("1.0")},
			{Name: "node_id", Since: v("1.0")},
			{Name: "portgroup_id", Since: v("1.0"), Nullable: true},
			{Name: "extra", Since: v("1.0"), Default: map[string]any{}},
			{Name: "local_link_connection", Since: v("1.0"), Default: map[string]any{}},
			{Name: "pxe_enabled", Since: v("1.0"), Default: true},
			{Name: "internal_info", Since: v("1.0"), Default: map[string]any{}},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
			// 1.1 (release 0.3): REST API 1.34 to 1.101.
			{Name: "physical_network", Since: v("1.1"), Nullable: true},
			{Name: "is_smartnic", Since: v("1.1"), Default: false},
			{Name: "name", Since: v("1.1"), Nullable: true},
			{Name: "description", Since: v("1.1"), Nullable: true},
			{Name: "vendor", Since: v("1.1"), Nullable: true},
			{Name: "category", Since: v("1.1"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.1-e27748f6b40b4cf0cd7f4dc935b21aee",
	}
}

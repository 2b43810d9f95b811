package objects

import "time"

// Portgroup is a bond of a Node's Ports.
type Portgroup struct {
	Base
	// ID is the internal primary key.
	ID   int64   `rivet:"id"`
	UUID string  `rivet:"uuid"`
	Name *string `rivet:"name"`
	// Address is the bond's MAC address, if set.
	Address *string `rivet:"address"`
	// NodeID is the ID of the Node the portgroup belongs to.
	NodeID       int64          `rivet:"node_id"`
	Extra        map[string]any `rivet:"extra"`
	InternalInfo map[string]any `rivet:"internal_info"`
	// StandalonePortsSupported defaults to true, as in Ironic.
	StandalonePortsSupported bool `rivet:"standalone_ports_supported"`
	// Mode is the bonding mode ("active-backup", "802.3ad", ...).
	Mode       *string        `rivet:"mode"`
	Properties map[string]any `rivet:"properties"`
	CreatedAt  time.Time      `rivet:"created_at"`
	UpdatedAt  *time.Time     `rivet:"updated_at"`
	// PhysicalNetwork (1.1, REST API 1.102) is the network of the
	// portgroup's ports when it has none yet.
	PhysicalNetwork *string `rivet:"physical_network"`
	// Category is a free text (1.1, REST API 1.103).
	Category *string `rivet:"category"`
}

// Kind implements Object.
func (*Portgroup) Kind() string { return "Portgroup" }

// PortgroupKind declares Portgroup for Register.
func PortgroupKind() Kind {
	return Kind{
		Name:     "Portgroup",
		New:      func() Object { return new(Portgroup) },
		Versions: []Step{{Version: v("1.0")}, {Version: v("1.1")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "uuid", Since: v("1.0")},
			{Name: "name", Since: v("1.0"), Nullable: true},
			{Name: "address", Since: v("1.0"), Nullable: true},
			{Name: "node_id", Since: v("1.0")},
			{Name: "extra", Since: v("1.0"), Default: map[string]any{}},
			{Name: "internal_info", Since: v("1.0"), Default: map[string]any{}},
			{Name: "standalone_ports_supported", Since: v("1.0"), Default: true},
			{Name: "mode", Since: v("1.0"), Nullable: true},
			{Name: "properties", Since: v("1.0"), Default: map[string]any{}},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
			// 1.1 (release 0.3): REST API 1.102, 1.103.
			{Name: "physical_network", Since: v("1.1"), Nullable: true},
			{Name: "category", Since: v("1.1"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.1-04161abf8bc5cdb44dab5d1a5ae22878",
	}
}

package objects

import "time"

// FirmwareComponent is one firmware component of a node as its firmware
// interface last read it (Ironic's FirmwareComponent, API 1.86): the
// version it had when first seen, the version it runs now and the version
// the last update step flashed. A node's components are written by the
// conductor's cache step (db.Store.SyncFirmwareComponents) after
// inspection, cleaning and the firmware update step, and shown read-only
// at /v1/nodes/{node}/firmware.
type FirmwareComponent struct {
	Base
	// ID is the internal primary key.
	ID int64 `rivet:"id"`
	// NodeID is the ID of the Node the component belongs to.
	NodeID int64 `rivet:"node_id"`
	// Component names it: "bios", "bmc", "nic:<id>".
	Component string `rivet:"component"`
	// InitialVersion is the version first read.
	InitialVersion string `rivet:"initial_version"`
	// CurrentVersion is the version read last.
	CurrentVersion *string `rivet:"current_version"`
	// LastVersionFlashed is the version the last update left, if any.
	LastVersionFlashed *string    `rivet:"last_version_flashed"`
	CreatedAt          time.Time  `rivet:"created_at"`
	UpdatedAt          *time.Time `rivet:"updated_at"`
}

// Kind implements Object.
func (*FirmwareComponent) Kind() string { return "FirmwareComponent" }

// FirmwareComponentKind declares FirmwareComponent for Register.
func FirmwareComponentKind() Kind {
	return Kind{
		Name:     "FirmwareComponent",
		New:      func() Object { return new(FirmwareComponent) },
		Versions: []Step{{Version: v("1.0")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "node_id", Since: v("1.0")},
			{Name: "component", Since: v("1.0")},
			{Name: "initial_version", Since: v("1.0")},
			{Name: "current_version", Since: v("1.0"), Nullable: true},
			{Name: "last_version_flashed", Since: v("1.0"), Nullable: true},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.0-018322479cbb044e46f16be9ec3192d3",
	}
}

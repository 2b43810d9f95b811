package objects

import "time"

// BIOSSetting is one BIOS setting of a node as its bios interface last
// read it (Ironic's BIOSSetting, API 1.40): a name and its value. A
// node's settings are replaced as a whole by the bios interface's cache
// step (db.Store.ReplaceBIOSSettings) and shown read-only at
// /v1/nodes/{node}/bios. The BIOS registry fields of API 1.74 are not
// part of this version.
type BIOSSetting struct {
	Base
	// NodeID is the ID of the Node the setting belongs to.
	NodeID int64 `rivet:"node_id"`
	// Name is the setting's name, unique per node.
	Name string `rivet:"name"`
	// Value is the setting's value as the BMC reports it.
	Value     *string    `rivet:"value"`
	CreatedAt time.Time  `rivet:"created_at"`
	UpdatedAt *time.Time `rivet:"updated_at"`
}

// Kind implements Object.
func (*BIOSSetting) Kind() string { return "BIOSSetting" }

// BIOSSettingKind declares BIOSSetting for Register.
func BIOSSettingKind() Kind {
	return Kind{
		Name:     "BIOSSetting",
		New:      func() Object { return new(BIOSSetting) },
		Versions: []Step{{Version: v("1.0")}},
		Fields: []Field{
			{Name: "node_id", Since: v("1.0")},
			{Name: "name", Since: v("1.0")},
			{Name: "value", Since: v("1.0"), Nullable: true},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.0-7f025a81c3f192614369a1b531ebb54e",
	}
}

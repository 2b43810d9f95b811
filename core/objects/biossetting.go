package objects

import "time"

// BIOSSetting is one BIOS setting of a node as its bios interface last
// read it (Ironic's BIOSSetting, API 1.40): a name and its value. A
// node's settings are replaced as a whole by the bios interface's cache
// step (db.Store.SyncBIOSSettings) and shown read-only at
// /v1/nodes/{node}/bios. The registry fields (API 1.74) say what the
// hardware's attribute registry says of the setting; they are nil (empty)
// when the bios interface has no registry. All are 1.0 fields: the kind is
// new in release 0.3, which is not cut.
type BIOSSetting struct {
	Base
	// NodeID is the ID of the Node the setting belongs to.
	NodeID int64 `rivet:"node_id"`
	// Name is the setting's name, unique per node.
	Name string `rivet:"name"`
	// Value is the setting's value as the BMC reports it.
	Value *string `rivet:"value"`
	// AttributeType is the registry's type ("Enumeration", "String",
	// "Integer", "Boolean", "Password").
	AttributeType *string `rivet:"attribute_type"`
	// AllowableValues lists an Enumeration's values.
	AllowableValues []string `rivet:"allowable_values"`
	// LowerBound and UpperBound bound an Integer; MinLength and MaxLength
	// a String.
	LowerBound *int64 `rivet:"lower_bound"`
	MaxLength  *int64 `rivet:"max_length"`
	MinLength  *int64 `rivet:"min_length"`
	// ReadOnly, ResetRequired and Unique are the registry's flags.
	ReadOnly      *bool      `rivet:"read_only"`
	ResetRequired *bool      `rivet:"reset_required"`
	Unique        *bool      `rivet:"unique"`
	UpperBound    *int64     `rivet:"upper_bound"`
	CreatedAt     time.Time  `rivet:"created_at"`
	UpdatedAt     *time.Time `rivet:"updated_at"`
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
			{Name: "attribute_type", Since: v("1.0"), Nullable: true},
			{Name: "allowable_values", Since: v("1.0"), Default: []string{}},
			{Name: "lower_bound", Since: v("1.0"), Nullable: true},
			{Name: "max_length", Since: v("1.0"), Nullable: true},
			{Name: "min_length", Since: v("1.0"), Nullable: true},
			{Name: "read_only", Since: v("1.0"), Nullable: true},
			{Name: "reset_required", Since: v("1.0"), Nullable: true},
			{Name: "unique", Since: v("1.0"), Nullable: true},
			{Name: "upper_bound", Since: v("1.0"), Nullable: true},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.0-a926a0bb679d925eff993b4c2d0e897e",
	}
}

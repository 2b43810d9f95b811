package objects

import "time"

// Chassis groups Nodes that share an enclosure.
type Chassis struct {
	Base
	// ID is the internal primary key.
	ID          int64          `rivet:"id"`
	UUID        string         `rivet:"uuid"`
	Description *string        `rivet:"description"`
	Extra       map[string]any `rivet:"extra"`
	CreatedAt   time.Time      `rivet:"created_at"`
	UpdatedAt   *time.Time     `rivet:"updated_at"`
}

// Kind implements Object.
func (*Chassis) Kind() string { return "Chassis" }

// ChassisKind declares Chassis for Register.
func ChassisKind() Kind {
	return Kind{
		Name:     "Chassis",
		New:      func() Object { return new(Chassis) },
		Versions: []Step{{Version: v("1.0")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "uuid", Since: v("1.0")},
			{Name: "description", Since: v("1.0"), Nullable: true},
			{Name: "extra", Since: v("1.0"), Default: map[string]any{}},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.0-f4f56b7cee565d13fb28f2a210de3d2d",
	}
}

package objects

import "time"

// Conductor is a registered conductor service.
type Conductor struct {
	Base
	// ID is the internal primary key.
	ID             int64  `rivet:"id"`
	Hostname       string `rivet:"hostname"`
	ConductorGroup string `rivet:"conductor_group"`
	Online         bool   `rivet:"online"`
	// Drivers lists the hardware types the conductor serves.
	Drivers   []string   `rivet:"drivers"`
	CreatedAt time.Time  `rivet:"created_at"`
	UpdatedAt *time.Time `rivet:"updated_at"`
}

// Kind implements Object.
func (*Conductor) Kind() string { return "Conductor" }

// ConductorKind declares Conductor for Register.
func ConductorKind() Kind {
	return Kind{
		Name:     "Conductor",
		New:      func() Object { return new(Conductor) },
		Versions: []Step{{Version: v("1.0")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "hostname", Since: v("1.0")},
			{Name: "conductor_group", Since: v("1.0"), Default: ""},
			{Name: "online", Since: v("1.0"), Default: false},
			{Name: "drivers", Since: v("1.0"), Default: []string{}},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.0-dc4b04e500969a6d7a3f1c7e3f6db3c3",
	}
}

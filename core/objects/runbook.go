package objects

import "time"

// Runbook is a named, ordered list of steps an operator runs on a node by
// manual cleaning or servicing (API 1.92). Steps are stored with the
// runbook, in one row, each {"interface", "step", "args", "order"}.
type Runbook struct {
	Base
	// ID is the internal primary key.
	ID   int64  `rivet:"id"`
	UUID string `rivet:"uuid"`
	// Name is a trait name (standard or CUSTOM_…), unique.
	Name string `rivet:"name"`
	// Steps are the runbook's steps, in the order given.
	Steps []map[string]any `rivet:"steps"`
	// DisableRamdisk runs the steps without booting the agent ramdisk.
	DisableRamdisk bool           `rivet:"disable_ramdisk"`
	Extra          map[string]any `rivet:"extra"`
	// Public runbooks may be used by every project; Owner is the project
	// owning a runbook that is not public.
	Public    bool       `rivet:"public"`
	Owner     *string    `rivet:"owner"`
	CreatedAt time.Time  `rivet:"created_at"`
	UpdatedAt *time.Time `rivet:"updated_at"`
}

// Kind implements Object.
func (*Runbook) Kind() string { return "Runbook" }

// RunbookKind declares Runbook for Register.
func RunbookKind() Kind {
	return Kind{
		Name:     "Runbook",
		New:      func() Object { return new(Runbook) },
		Versions: []Step{{Version: v("1.0")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "uuid", Since: v("1.0")},
			{Name: "name", Since: v("1.0")},
			{Name: "steps", Since: v("1.0"), Default: []map[string]any{}},
			{Name: "disable_ramdisk", Since: v("1.0"), Default: false},
			{Name: "extra", Since: v("1.0"), Default: map[string]any{}},
			{Name: "public", Since: v("1.0"), Default: false},
			{Name: "owner", Since: v("1.0"), Nullable: true},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.0-eda41dddedf3c1f9fd09afa3fac3a2b4",
	}
}

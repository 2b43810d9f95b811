package objects

import "time"

// DeployTemplate is a named set of deploy steps (API 1.55): a deploy runs
// the steps of every template whose name is one of the traits the instance
// asked for (instance_info.traits). Steps are stored with the template, in
// one row, each {"interface", "step", "args", "priority"}; core/steps reads
// them typed.
type DeployTemplate struct {
	Base
	// ID is the internal primary key.
	ID   int64  `rivet:"id"`
	UUID string `rivet:"uuid"`
	// Name is a trait name (standard or CUSTOM_…), unique.
	Name string `rivet:"name"`
	// Steps are the template's deploy steps, in the order given.
	Steps     []map[string]any `rivet:"steps"`
	Extra     map[string]any   `rivet:"extra"`
	CreatedAt time.Time        `rivet:"created_at"`
	UpdatedAt *time.Time       `rivet:"updated_at"`
}

// Kind implements Object.
func (*DeployTemplate) Kind() string { return "DeployTemplate" }

// DeployTemplateKind declares DeployTemplate for Register.
func DeployTemplateKind() Kind {
	return Kind{
		Name:     "DeployTemplate",
		New:      func() Object { return new(DeployTemplate) },
		Versions: []Step{{Version: v("1.0")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "uuid", Since: v("1.0")},
			{Name: "name", Since: v("1.0")},
			{Name: "steps", Since: v("1.0"), Default: []map[string]any{}},
			{Name: "extra", Since: v("1.0"), Default: map[string]any{}},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.0-5ff0d6af95801e2fe82c609247f7f7e3",
	}
}

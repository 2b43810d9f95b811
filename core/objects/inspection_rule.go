package objects

import "time"

// InspectionRule is a rule run on a node's inspection data after
// inspection (API 1.96, Ironic's InspectionRule): when every condition
// holds, its actions change the node, its ports, traits or the plugin data
// stored. Conditions and actions are stored with the rule, in one row,
// each {"op", "args"[, "loop"][, "multiple"]}.
type InspectionRule struct {
	Base
	// ID is the internal primary key.
	ID   int64  `rivet:"id"`
	UUID string `rivet:"uuid"`
	// Priority orders the rules: higher first (0–9999 for rules created
	// through the API; built-in rules may use any).
	Priority    int64   `rivet:"priority"`
	Description *string `rivet:"description"`
	// Sensitive rules never show their conditions and actions through the
	// API, and see unmasked secrets when [inspection_rules] mask_secrets is
	// "sensitive".
	Sensitive bool `rivet:"sensitive"`
	// Phase is when the rule runs; Ironic knows only "main".
	Phase      string           `rivet:"phase"`
	Conditions []map[string]any `rivet:"conditions"`
	Actions    []map[string]any `rivet:"actions"`
	CreatedAt  time.Time        `rivet:"created_at"`
	UpdatedAt  *time.Time       `rivet:"updated_at"`
}

// Kind implements Object.
func (*InspectionRule) Kind() string { return "InspectionRule" }

// InspectionRuleKind declares InspectionRule for Register.
func InspectionRuleKind() Kind {
	return Kind{
		Name:     "InspectionRule",
		New:      func() Object { return new(InspectionRule) },
		Versions: []Step{{Version: v("1.0")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "uuid", Since: v("1.0")},
			{Name: "priority", Since: v("1.0"), Default: int64(0)},
			{Name: "description", Since: v("1.0"), Nullable: true},
			{Name: "sensitive", Since: v("1.0"), Default: false},
			{Name: "phase", Since: v("1.0"), Default: "main"},
			{Name: "conditions", Since: v("1.0"), Default: []map[string]any{}},
			{Name: "actions", Since: v("1.0"), Default: []map[string]any{}},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.0-d2aafb0cee1d5e2a2e825a2099efd816",
	}
}

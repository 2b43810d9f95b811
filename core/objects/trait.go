package objects

import "time"

// MaxTraitsPerNode is how many traits one node may have, as Ironic's
// MAX_TRAITS_PER_NODE.
const MaxTraitsPerNode = 50

// Trait is one trait of a node (API 1.37): a qualitative attribute that
// Nova's placement schedules on and deploy templates are matched against.
// A node's traits are rows of their own (node_traits), not a Node field:
// the Node's columns and fast paths stay as they are, and a list reads the
// traits of a whole page in one query.
type Trait struct {
	Base
	// ID is the internal primary key.
	ID int64 `rivet:"id"`
	// NodeID is the ID of the node the trait belongs to.
	NodeID int64 `rivet:"node_id"`
	// Trait is the trait's name: a standard os-traits name or CUSTOM_….
	Trait     string     `rivet:"trait"`
	CreatedAt time.Time  `rivet:"created_at"`
	UpdatedAt *time.Time `rivet:"updated_at"`
}

// Kind implements Object.
func (*Trait) Kind() string { return "Trait" }

// TraitKind declares Trait for Register.
func TraitKind() Kind {
	return Kind{
		Name:     "Trait",
		New:      func() Object { return new(Trait) },
		Versions: []Step{{Version: v("1.0")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "node_id", Since: v("1.0")},
			{Name: "trait", Since: v("1.0")},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.0-f0e9e850916f5f167cdfbf7647b202f7",
	}
}

package objects

import "time"

// Allocation is a request for a node (API 1.52): the conductor picks an
// available node matching ResourceClass, Traits and CandidateNodes and
// reserves it (state "allocating" → "active", or "error" with LastError),
// or, backfilled (API 1.58), records a node deployed without one.
type Allocation struct {
	Base
	// ID is the internal primary key.
	ID   int64   `rivet:"id"`
	UUID string  `rivet:"uuid"`
	Name *string `rivet:"name"`
	// NodeID is the id of the node reserved for the allocation, if any.
	NodeID *int64 `rivet:"node_id"`
	// State is "allocating", "active" or "error".
	State         string  `rivet:"state"`
	LastError     *string `rivet:"last_error"`
	ResourceClass *string `rivet:"resource_class"`
	// Traits every candidate node must have.
	Traits []string `rivet:"traits"`
	// CandidateNodes restricts the search to these node UUIDs.
	CandidateNodes []string       `rivet:"candidate_nodes"`
	Extra          map[string]any `rivet:"extra"`
	// ConductorAffinity is the id of the conductor processing the
	// allocation.
	ConductorAffinity *int64 `rivet:"conductor_affinity"`
	// Owner is the project the allocation is for (API 1.60): only nodes
	// it owns or leases match.
	Owner     *string    `rivet:"owner"`
	CreatedAt time.Time  `rivet:"created_at"`
	UpdatedAt *time.Time `rivet:"updated_at"`
}

// Kind implements Object.
func (*Allocation) Kind() string { return "Allocation" }

// Allocation states (Ironic's states.ALLOCATING, ACTIVE, ERROR).
const (
	AllocationAllocating = "allocating"
	AllocationActive     = "active"
	AllocationError      = "error"
)

// AllocationKind declares Allocation for Register. Release 0.3 brings it
// at 1.0 with Ironic's fields of its Allocation 1.1 (owner included).
func AllocationKind() Kind {
	return Kind{
		Name:     "Allocation",
		New:      func() Object { return new(Allocation) },
		Versions: []Step{{Version: v("1.0")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "uuid", Since: v("1.0")},
			{Name: "name", Since: v("1.0"), Nullable: true},
			{Name: "node_id", Since: v("1.0"), Nullable: true},
			{Name: "state", Since: v("1.0"), Default: AllocationAllocating},
			{Name: "last_error", Since: v("1.0"), Nullable: true},
			{Name: "resource_class", Since: v("1.0"), Nullable: true},
			{Name: "traits", Since: v("1.0"), Default: []string{}},
			{Name: "candidate_nodes", Since: v("1.0"), Default: []string{}},
			{Name: "extra", Since: v("1.0"), Default: map[string]any{}},
			{Name: "conductor_affinity", Since: v("1.0"), Nullable: true},
			{Name: "owner", Since: v("1.0"), Nullable: true},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.0-448a4d9b9e13454ada1eb9cb38502387",
	}
}

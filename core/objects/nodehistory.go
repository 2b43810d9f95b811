package objects

import "time"

// NodeHistory is one entry of a node's history (Ironic's NodeHistory, API
// 1.78): an event a conductor recorded about the node — a failure that set
// last_error, a provision or power state transition, a takeover, an
// action a takeover interrupted. Entries are written once and never
// changed; conductors remove the oldest past [conductor]
// node_history_max_entries.
type NodeHistory struct {
	Base
	// ID is the internal primary key.
	ID   int64  `rivet:"id"`
	UUID string `rivet:"uuid"`
	// NodeID is the ID of the Node the entry is about.
	NodeID int64 `rivet:"node_id"`
	// Conductor is the hostname of the conductor that recorded it.
	Conductor *string `rivet:"conductor"`
	// EventType is the activity the event happened in ("provisioning",
	// "power", "takeover", …).
	EventType *string `rivet:"event_type"`
	// Severity is "ERROR" for failures, else "INFO".
	Severity *string `rivet:"severity"`
	// Event is the text, ending with the request id when one caused it.
	Event *string `rivet:"event"`
	// UserName is the API user whose request caused it (Ironic's user).
	UserName  *string    `rivet:"user_name"`
	CreatedAt time.Time  `rivet:"created_at"`
	UpdatedAt *time.Time `rivet:"updated_at"`
}

// Kind implements Object.
func (*NodeHistory) Kind() string { return "NodeHistory" }

// NodeHistoryKind declares NodeHistory for Register.
func NodeHistoryKind() Kind {
	return Kind{
		Name:     "NodeHistory",
		New:      func() Object { return new(NodeHistory) },
		Versions: []Step{{Version: v("1.0")}},
		Fields: []Field{
			{Name: "id", Since: v("1.0")},
			{Name: "uuid", Since: v("1.0")},
			{Name: "node_id", Since: v("1.0")},
			{Name: "conductor", Since: v("1.0"), Nullable: true},
			{Name: "event_type", Since: v("1.0"), Nullable: true},
			{Name: "severity", Since: v("1.0"), Nullable: true},
			{Name: "event", Since: v("1.0"), Nullable: true},
			{Name: "user_name", Since: v("1.0"), Nullable: true},
			{Name: "created_at", Since: v("1.0")},
			{Name: "updated_at", Since: v("1.0"), Nullable: true},
		},
		// Fingerprint pins this shape at the latest version; see FingerprintError
		// before changing a field.
		Fingerprint: "1.0-46130a199a82b9c31559c0379441d08c",
	}
}

package db

import "github.com/uptrace/bun"

// Allocation is a row of the allocations table: a request for a node and,
// once processed, the node reserved for it (Allocation 1.0).
type Allocation struct {
	bun.BaseModel `bun:"table:allocations,alias:a"`

	ID                int64       `bun:"id,pk,autoincrement"`
	UUID              string      `bun:"uuid,notnull"`
	Name              *string     `bun:"name"`
	NodeID            *int64      `bun:"node_id"`
	State             string      `bun:"state,notnull"`
	Owner             *string     `bun:"owner"`
	LastError         *string     `bun:"last_error"`
	ResourceClass     *string     `bun:"resource_class"`
	Traits            JSONStrings `bun:"traits"`
	CandidateNodes    JSONStrings `bun:"candidate_nodes"`
	Extra             JSONObject  `bun:"extra"`
	ConductorAffinity *int64      `bun:"conductor_affinity"`
	Timestamps
	// Version is the Allocation object version the row was written at.
	Version *string `bun:"version"`
}

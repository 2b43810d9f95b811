package db

import (
	"context"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// InspectionRule is a row of the inspection_rules table (API 1.96).
type InspectionRule struct {
	bun.BaseModel `bun:"table:inspection_rules,alias:ir"`

	ID          int64    `bun:"id,pk,autoincrement"`
	UUID        string   `bun:"uuid,notnull"`
	Priority    int64    `bun:"priority,notnull"`
	Description *string  `bun:"description"`
	Sensitive   *bool    `bun:"sensitive"`
	Phase       *string  `bun:"phase"`
	Conditions  JSONList `bun:"conditions"`
	Actions     JSONList `bun:"actions"`
	Timestamps
	// Version is the InspectionRule object version the row was written at.
	Version *string `bun:"version"`
}

// InspectionRulesForPhase returns the stored inspection rules of phase,
// highest priority first (ties in creation order): what the conductor
// evaluates after inspection.
func (s *Store) InspectionRulesForPhase(ctx context.Context, phase string) ([]*objects.InspectionRule, error) {
	objs, err := s.LoadAll(ctx, "InspectionRule", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.phase = ?", phase).OrderExpr("?TableAlias.priority DESC, ?TableAlias.id ASC")
	})
	if err != nil {
		return nil, err
	}
	out := make([]*objects.InspectionRule, len(objs))
	for i, o := range objs {
		out[i] = o.(*objects.InspectionRule)
	}
	return out, nil
}

package db_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/uptrace/bun"
)

// TestStepSetsThroughStore: deploy templates and runbooks go through the
// Store's generic path on every dialect, steps (a JSON list) and all, and
// DeployTemplatesByName finds templates by name in name order.
func TestStepSetsThroughStore(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		s, reg := latestStore(t, dbtest.Open(t, d))
		steps := []map[string]any{{"interface": "bios", "step": "apply_configuration", "priority": json.Number("150"),
			"args": map[string]any{"settings": []any{map[string]any{"name": "x", "value": "y"}}}}}
		for i, name := range []string{"CUSTOM_B", "CUSTOM_A", "CUSTOM_C"} {
			obj, _ := reg.New("DeployTemplate")
			tmpl := obj.(*objects.DeployTemplate)
			tmpl.UUID, tmpl.Name, tmpl.Steps = "90000000-0000-0000-0000-00000000000"+string(rune('0'+i)), name, steps
			if err := s.Create(ctx, tmpl); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.DeployTemplatesByName(ctx, []string{"CUSTOM_C", "CUSTOM_A", "CUSTOM_Z"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Name != "CUSTOM_A" || got[1].Name != "CUSTOM_C" {
			t.Fatalf("by name: %+v", got)
		}
		if d := cmp.Diff(steps, got[0].Steps); d != "" {
			t.Errorf("steps read back (-want +got):\n%s", d)
		}

		obj, _ := reg.New("Runbook")
		rb := obj.(*objects.Runbook)
		owner := "p1"
		rb.UUID, rb.Name, rb.Steps, rb.Owner, rb.DisableRamdisk = "a0000000-0000-0000-0000-000000000001", "CUSTOM_RB", steps, &owner, true
		if err := s.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
		rb.Public, rb.Owner = true, nil
		if err := s.Save(ctx, rb); err != nil {
			t.Fatal(err)
		}
		back, err := s.Load(ctx, "Runbook", func(q *bun.SelectQuery) *bun.SelectQuery { return q.Where("?TableAlias.uuid = ?", rb.UUID) })
		if err != nil {
			t.Fatal(err)
		}
		if b := back.(*objects.Runbook); !b.Public || b.Owner != nil || !b.DisableRamdisk || len(b.Steps) != 1 {
			t.Errorf("runbook read back: %+v", b)
		}
	})
}

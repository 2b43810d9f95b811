package api

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
)

// changesCapture records the fields update_node receives as changed.
type changesCapture struct {
	Conductor
	reg  *objects.Registry
	sent []string
}

func (c *changesCapture) UpdateNode(ctx context.Context, n *objects.Node) (*objects.Node, error) {
	changed, err := c.reg.Changed(n)
	if err != nil {
		return nil, err
	}
	c.sent = changed
	return c.Conductor.UpdateNode(ctx, n)
}

// A PATCH sends the conductor only the fields it changes. A node row an
// older release wrote (Node 1.0) reads back converted to 1.1, the fields
// 1.1 added marked changed at their defaults: were those sent, the
// conductor would take them for the client's changes, and an online
// migration that backfilled them between the read and the update would be
// undone, or the update of an active node refused for changing its
// interfaces (found by test/upgrade: a PATCH of extra got 409 during
// `rivet dbsync online-data-migrations`).
func TestPatchSendsOnlyThePatchedFields(t *testing.T) {
	capture := &changesCapture{}
	e := newEnv(t, func(d *Deps) {
		capture.Conductor, capture.reg = d.Conductor, d.Store.Registry()
		d.Conductor = capture
	})
	pin, err := release.Default().ParsePin("0.1")
	if err != nil {
		t.Fatal(err)
	}
	old := db.NewStore(e.store.DB(), e.store.Registry(), release.NewPinner(release.Default(), pin))
	n := &objects.Node{UUID: "5a0f8cb4-3c5e-4b8e-9d56-0c5b2b1f6a11", Driver: "fake-hardware", ProvisionState: "active",
		Extra: map[string]any{}}
	if err := old.Create(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, http.MethodPatch, "/v1/nodes/"+n.UUID, "1.31",
		[]map[string]any{{"op": "add", "path": "/extra/rack", "value": "r1"}})
	if !slices.Equal(capture.sent, []string{"extra"}) {
		t.Fatalf("update_node got changes %v, want [extra]", capture.sent)
	}
}

package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
)

// addHistory records an entry for the node as a conductor does.
func (e *env) addHistory(nodeUUID, uuid, severity, event string) {
	e.t.Helper()
	n, err := e.store.GetNode(context.Background(), nodeUUID)
	if err != nil {
		e.t.Fatal(err)
	}
	obj, _ := e.store.Registry().New("NodeHistory")
	h := obj.(*objects.NodeHistory)
	host, et, user := "cond-a", "provisioning", "alice"
	h.UUID, h.NodeID, h.Severity, h.Event, h.Conductor, h.EventType, h.UserName = uuid, n.ID, &severity, &event, &host, &et, &user
	if err := e.store.Create(context.Background(), h); err != nil {
		e.t.Fatal(err)
	}
}

// TestV1_78NodeHistory: the history sub-resource exists from 1.78 (404
// below, as Ironic), lists a node's entries oldest first with Ironic's
// fields (an event over 255 characters cut to 251 and "..." unless
// detail, as Ironic), pages with
// limit and marker, and shows one entry in detail; an entry of another
// node is not found.
func TestV1_78NodeHistory(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.80"))
	a, b := e.node(nil), e.node(nil)
	long := strings.Repeat("é", 300)
	ids := []string{"00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002", "00000000-0000-4000-8000-000000000003"}
	e.addHistory(a, ids[0], "ERROR", "Failed to deploy (request req-1)")
	e.addHistory(a, ids[1], "INFO", long)
	e.addHistory(b, ids[2], "INFO", "other node")

	e.must(http.StatusNotFound, "GET", "/v1/nodes/"+a+"/history", "1.77", nil)
	e.must(http.StatusNotFound, "GET", "/v1/nodes/"+a+"/history/"+ids[0], "1.77", nil)

	list := e.must(http.StatusOK, "GET", "/v1/nodes/"+a+"/history", "1.78", nil).JSON(t)["history"].([]any)
	if len(list) != 2 {
		t.Fatalf("%d entries, want 2", len(list))
	}
	first, second := list[0].(map[string]any), list[1].(map[string]any)
	if d := cmp.Diff([]string{"created_at", "event", "links", "severity", "uuid"}, keys(first)); d != "" {
		t.Errorf("list fields (-want +got):\n%s", d)
	}
	if first["uuid"] != ids[0] || first["severity"] != "ERROR" || first["event"] != "Failed to deploy (request req-1)" {
		t.Errorf("first entry %v", first)
	}
	if ev := second["event"].(string); len([]rune(ev)) != 254 || !strings.HasSuffix(ev, "...") {
		t.Errorf("long event not cut to 251 characters and an ellipsis (Ironic): %d characters", len([]rune(ev)))
	}
	link := first["links"].([]any)[0].(map[string]any)
	if link["href"] != "http://rivet.test/v1/nodes/"+a+"/history/"+ids[0] || link["rel"] != "self" {
		t.Errorf("link %v", link)
	}

	detail := e.must(http.StatusOK, "GET", "/v1/nodes/"+a+"/history?detail=true", "1.78", nil).JSON(t)["history"].([]any)
	d0 := detail[1].(map[string]any)
	if d := cmp.Diff([]string{"conductor", "created_at", "event", "event_type", "links", "severity", "user", "uuid"}, keys(d0)); d != "" {
		t.Errorf("detail fields (-want +got):\n%s", d)
	}
	if d0["event"] != long || d0["conductor"] != "cond-a" || d0["event_type"] != "provisioning" || d0["user"] != "alice" {
		t.Errorf("detail entry %v", d0)
	}

	page := e.must(http.StatusOK, "GET", "/v1/nodes/"+a+"/history?limit=1", "1.78", nil).JSON(t)
	next, _ := page["next"].(string)
	if len(page["history"].([]any)) != 1 || !strings.Contains(next, "marker="+ids[0]) {
		t.Fatalf("page 1: %v", page)
	}
	page2 := e.must(http.StatusOK, "GET", strings.TrimPrefix(next, "http://rivet.test"), "1.78", nil).JSON(t)["history"].([]any)
	if len(page2) != 1 || page2[0].(map[string]any)["uuid"] != ids[1] {
		t.Fatalf("page 2: %v", page2)
	}
	e.must(http.StatusBadRequest, "GET", "/v1/nodes/"+a+"/history?marker=nope", "1.78", nil)
	e.must(http.StatusBadRequest, "GET", "/v1/nodes/"+a+"/history?detail=maybe", "1.78", nil)

	one := e.must(http.StatusOK, "GET", "/v1/nodes/"+a+"/history/"+ids[0], "1.78", nil).JSON(t)
	if one["uuid"] != ids[0] || one["event_type"] != "provisioning" {
		t.Errorf("one entry %v", one)
	}
	r := e.must(http.StatusNotFound, "GET", "/v1/nodes/"+a+"/history/"+ids[2], "1.78", nil)
	if got, want := r.Fault(t), fmt.Sprintf("Node history record %s could not be found.", ids[2]); got != want {
		t.Errorf("fault %q, want %q", got, want)
	}
	e.must(http.StatusNotFound, "GET", "/v1/nodes/nope/history", "1.78", nil)
}

// While pinned to 0.2 (API 1.31) history is refused as any version above
// the pinned maximum is: 406 with the range.
func TestHistoryPinned(t *testing.T) {
	pin, err := release.Default().ParsePin("0.2")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvPinned(t, release.NewPinner(release.Default(), pin), withMaxAPI("1.80"))
	id := e.node(nil)
	e.must(http.StatusNotAcceptable, "GET", "/v1/nodes/"+id+"/history", "1.78", nil)
	e.must(http.StatusNotFound, "GET", "/v1/nodes/"+id+"/history", "latest", nil)
}

package api

import (
	"net/http"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/uptrace/bun"
)

// historyEventMax is how much of an event a non-detail history list shows,
// as Ironic truncates it (251 characters and "...").
const historyEventMax = 255

// historyAllowed answers 404 below 1.78, as Ironic's node controller does
// for the history sub-resource.
func historyAllowed(r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_78) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	return nil
}

func errHistoryNotFound(ident string) error {
	return errorf(http.StatusNotFound, "Node history record %s could not be found.", ident)
}

// historyView is an entry as Ironic shows it: uuid, created_at, severity,
// event and a self link; in detail also event_type, conductor and user
// (the http_basic user whose request caused it; null for noauth and the
// conductors' own periodic work).
func historyView(r *http.Request, nodeUUID string, e *objects.NodeHistory, detail bool) map[string]any {
	var event any
	if e.Event != nil {
		ev := *e.Event
		if rs := []rune(ev); !detail && len(rs) > historyEventMax {
			ev = string(rs[:historyEventMax-4]) + "..."
		}
		event = ev
	}
	view := map[string]any{
		"uuid": e.UUID, "created_at": isoTime(e.CreatedAt), "severity": strOrNil(e.Severity), "event": event,
		"links": []link{{Href: BaseURL(r) + "/v1/nodes/" + nodeUUID + "/history/" + e.UUID, Rel: "self"}},
	}
	if detail {
		view["event_type"] = strOrNil(e.EventType)
		view["conductor"] = strOrNil(e.Conductor)
		view["user"] = strOrNil(e.UserName)
	}
	return view
}

// listHistory serves GET /v1/nodes/{node}/history (1.78): the node's
// entries oldest first (sort_key created_at, as Ironic), with detail,
// limit, marker, sort_key and sort_dir.
func (s *server) listHistory(w http.ResponseWriter, r *http.Request) error {
	if err := historyAllowed(r); err != nil {
		return err
	}
	q := r.URL.Query()
	detail := false
	if q.Has("detail") {
		b, err := parseBool("detail", q.Get("detail"))
		if err != nil {
			return err
		}
		detail = b
	}
	if m := q.Get("marker"); m != "" && !isUUID(m) {
		return errorf(http.StatusBadRequest, "Expected a UUID but received %s.", m)
	}
	n, err := s.historyNode(r)
	if err != nil {
		return err
	}
	pg, err := s.parsePage(r, "NodeHistory")
	if err != nil {
		return err
	}
	if !q.Has("sort_key") {
		pg.sortKey = "created_at"
	}
	nodeID := n.ID
	objs, err := s.loadPage(r.Context(), "NodeHistory", pg, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.node_id = ?", nodeID)
	}, errHistoryNotFound)
	if err != nil {
		return err
	}
	items, last := make([]map[string]any, 0, len(objs)), ""
	for _, o := range objs {
		e := o.(*objects.NodeHistory)
		items = append(items, historyView(r, n.UUID, e, detail))
		last = e.UUID
	}
	writeCollection(w, "history", items, nextURL(r, pg, len(objs), last))
	return nil
}

// getHistoryEvent serves GET /v1/nodes/{node}/history/{event} (1.78): one
// entry in detail. An entry of another node is not found (Ironic looks the
// entry up by UUID alone).
func (s *server) getHistoryEvent(w http.ResponseWriter, r *http.Request) error {
	if err := historyAllowed(r); err != nil {
		return err
	}
	n, err := s.historyNode(r)
	if err != nil {
		return err
	}
	ident := r.PathValue("event")
	if !isUUID(ident) {
		return errHistoryNotFound(ident)
	}
	nodeID := n.ID
	obj, err := s.Store.Load(r.Context(), "NodeHistory", func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.uuid = ?", ident).Where("?TableAlias.node_id = ?", nodeID)
	})
	if err != nil {
		if isNotFound(err) {
			return errHistoryNotFound(ident)
		}
		return err
	}
	writeView(w, http.StatusOK, historyView(r, n.UUID, obj.(*objects.NodeHistory), true))
	return nil
}

// historyNode is the node of a history request: hidden as not found from
// a project that cannot see it, 403 for one that sees it without the
// right to its history (a lessee: Ironic's baremetal:node:history:get is
// system or owner reader).
func (s *server) historyNode(r *http.Request) (*objects.Node, error) {
	return s.getNodeByIdent(r, r.PathValue("node"))
}

package api

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/uptrace/bun"
)

// sqlLog records the SELECTs on the nodes table.
type sqlLog struct {
	mu      sync.Mutex
	queries []string
}

func (l *sqlLog) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (l *sqlLog) AfterQuery(_ context.Context, ev *bun.QueryEvent) {
	if strings.HasPrefix(ev.Query, "SELECT") && strings.Contains(ev.Query, `FROM "nodes"`) {
		l.mu.Lock()
		l.queries = append(l.queries, ev.Query)
		l.mu.Unlock()
	}
}

func (l *sqlLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.queries) == 0 {
		return ""
	}
	return l.queries[len(l.queries)-1]
}

// Walking every page gives every node once, in order, whatever the sort
// key and direction, NULL keys included (last ascending, first
// descending). A page sorted on a key that is never NULL orders by that key
// alone, so the database can read it from the key's index rather than
// sort the whole table.
func TestPaginationWalk(t *testing.T) {
	e := newEnv(t)
	log := &sqlLog{}
	e.store.DB().Bun().AddQueryHook(log)
	var ids []string
	for i := range 7 {
		fields := map[string]any{}
		if i%3 != 0 {
			fields["resource_class"] = fmt.Sprintf("rc%d", 9-i) // reversed; nodes 0, 3, 6 have none
		}
		ids = append(ids, e.node(fields))
	}
	rcOf := map[string]string{}
	for i, id := range ids {
		if i%3 != 0 {
			rcOf[id] = fmt.Sprintf("rc%d", 9-i)
		}
	}
	rev := slices.Clone(ids)
	slices.Reverse(rev)
	// By resource_class: rc4 (node 5) … rc8 (node 1), then the NULLs by id.
	byRC := []string{ids[5], ids[4], ids[2], ids[1], ids[0], ids[3], ids[6]}
	byRCDesc := slices.Clone(byRC)
	slices.Reverse(byRCDesc)
	byUUID := slices.Clone(ids)
	slices.Sort(byUUID)
	tests := []struct {
		query    string
		want     []string
		orderSQL string // the ORDER BY the page query must use
	}{
		{"", ids, `ORDER BY "n"."id" ASC LIMIT 3`},
		{"sort_dir=desc", rev, `ORDER BY "n"."id" DESC LIMIT 3`},
		{"sort_key=uuid", byUUID, `ORDER BY "n"."uuid" ASC, "n".id ASC LIMIT 3`},
		{"sort_key=resource_class", byRC, `ORDER BY ("n"."resource_class" IS NULL) ASC, "n"."resource_class" ASC, "n".id ASC LIMIT 3`},
		{"sort_key=resource_class&sort_dir=desc", byRCDesc, `ORDER BY ("n"."resource_class" IS NULL) DESC, "n"."resource_class" DESC, "n".id DESC LIMIT 3`},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			var seen []string
			next := "/v1/nodes?limit=3&" + tc.query
			for pages := 0; next != ""; pages++ {
				if pages > 5 {
					t.Fatalf("more than 5 pages of 3 for 7 nodes; seen %v", seen)
				}
				p := e.must(200, "GET", next, "1.21", nil).JSON(t)
				for _, n := range p["nodes"].([]any) {
					seen = append(seen, n.(map[string]any)["uuid"].(string))
				}
				if q := log.last(); !strings.Contains(q, tc.orderSQL) {
					_, tail, _ := strings.Cut(q, " FROM ")
					t.Errorf("page query ... FROM %s\ndoes not end %s", tail, tc.orderSQL)
				}
				next, _ = p["next"].(string)
				next = strings.TrimPrefix(next, "http://rivet.test")
			}
			if d := cmp.Diff(tc.want, seen); d != "" {
				t.Errorf("walking pages (-want +got):\n%s", d)
			}
		})
	}
}

package api

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/rivetmetal/rivet/core/version"
)

// v1_106 is ?shard= on portgroup lists (ports have it since 1.82).
var v1_106 = version.Version{Major: 1, Minor: 106}

// stringList reads a comma-separated query parameter as Ironic's
// args.string_list does: every value given, split on commas, trimmed,
// lower-cased, empty items and repeats dropped, in order.
func stringList(q url.Values, name string) []string {
	var out []string
	for _, item := range q[name] {
		for _, s := range strings.Split(item, ",") {
			if s = strings.ToLower(strings.TrimSpace(s)); s != "" && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// shardList reads ?shard=a,b of a port (1.82) or portgroup (1.106) list:
// 406 with Ironic's message below since, even when empty, as its
// check_allow_filter_by_shard and check_allow_portgroup_filter_by_shard.
func shardList(r *http.Request, since version.Version) ([]string, error) {
	q := r.URL.Query()
	if !q.Has("shard") {
		return nil, nil
	}
	if VersionFrom(r.Context()).Less(since) {
		return nil, errorf(http.StatusNotAcceptable, "Request not acceptable. The minimal required API version should be %s", since)
	}
	return stringList(q, "shard"), nil
}

// inShards narrows a port or portgroup query to those of nodes in the
// shards.
func inShards(shards []string) func(*bun.SelectQuery) *bun.SelectQuery {
	return func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.node_id IN (SELECT id FROM nodes WHERE shard IN (?))", bun.In(shards))
	}
}

// countGiven counts the filters given.
func countGiven(given ...bool) int {
	n := 0
	for _, g := range given {
		if g {
			n++
		}
	}
	return n
}

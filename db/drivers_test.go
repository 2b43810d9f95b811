package db

import "testing"

// pgx keeps statementCacheCapacity prepared statements per connection
// unless the URL names another capacity (docs/performance.md: 512, pgx's
// default, held ~42 MiB in a conductor syncing 10,000 nodes).
func TestPostgresStatementCache(t *testing.T) {
	for url, want := range map[string]int{
		"postgresql://rivet@db.example/rivet":                              statementCacheCapacity,
		"postgresql://rivet@db.example/rivet?statement_cache_capacity=512": 512,
		"postgresql://rivet@db.example/rivet?statement_cache_capacity=0":   0,
	} {
		c, err := parseConnection(url)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := postgresConfig(c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.StatementCacheCapacity != want || cfg.RuntimeParams["application_name"] != "rivet" {
			t.Errorf("%s: statement cache %d, application_name %q; want %d, rivet",
				url, cfg.StatementCacheCapacity, cfg.RuntimeParams["application_name"], want)
		}
	}
}

// A query text counts as seen while fewer than size others went by since.
func TestRecentQueries(t *testing.T) {
	r := newRecentQueries(4) // generations of 2
	if r.seen("a") || !r.seen("a") {
		t.Fatal("a: want unseen, then seen")
	}
	for _, q := range []string{"b", "c"} {
		if r.seen(q) {
			t.Fatalf("%s seen before it was sent", q)
		}
	}
	if !r.seen("a") {
		t.Fatal("a forgotten two queries later")
	}
	for _, q := range []string{"d", "e", "f", "g", "h"} {
		r.seen(q)
	}
	if r.seen("b") {
		t.Fatal("b remembered after six other queries")
	}
}

package api

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/db"
)

func TestV1_49Conductors(t *testing.T) {
	e := newEnv(t, withMaxAPI("1.49"))
	// cond-a and cond-b are registered (alive); cond-old heartbeated long
	// ago and cond-off shut down.
	ctx := context.Background()
	dbh := e.store.DB()
	for _, host := range []string{"cond-old", "cond-off"} {
		if _, err := dbh.RegisterConductor(ctx, db.ConductorRegistration{Hostname: host, Group: "Rack2", Drivers: []string{"ipmi"}, Version: "1.0"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := dbh.Bun().NewUpdate().Table(db.TableConductors).Set("updated_at = ?", time.Now().Add(-time.Hour)).
		Where("hostname = ?", "cond-old").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dbh.TouchConductor(ctx, "cond-off", false); err != nil {
		t.Fatal(err)
	}

	for _, path := range []string{"/v1/conductors", "/v1/conductors/cond-a"} {
		if got := e.must(http.StatusNotFound, "GET", path, "1.48", nil).Fault(t); got != "The API is not supported for this version" {
			t.Errorf("%s at 1.48: %q", path, got)
		}
	}
	if _, ok := e.must(http.StatusOK, "GET", "/v1/", "1.48", nil).JSON(t)["conductors"]; ok {
		t.Error("/v1 lists conductors at 1.48")
	}
	if _, ok := e.must(http.StatusOK, "GET", "/v1/", "1.49", nil).JSON(t)["conductors"]; !ok {
		t.Error("/v1 does not list conductors at 1.49")
	}

	list := e.must(http.StatusOK, "GET", "/v1/conductors", "1.49", nil).JSON(t)["conductors"].([]any)
	alive := map[string]any{}
	for _, c := range list {
		m := c.(map[string]any)
		if d := cmp.Diff([]string{"alive", "conductor_group", "hostname", "links"}, keysOf(m)); d != "" {
			t.Errorf("list item (-want +got):\n%s", d)
		}
		alive[m["hostname"].(string)] = m["alive"]
	}
	if d := cmp.Diff(map[string]any{"cond-a": true, "cond-b": true, "cond-old": false, "cond-off": false}, alive); d != "" {
		t.Errorf("alive (-want +got):\n%s", d)
	}

	one := e.must(http.StatusOK, "GET", "/v1/conductors/cond-old", "1.49", nil).JSON(t)
	if d := cmp.Diff(sortedCopy(conductorFields), keysOf(one)); d != "" {
		t.Errorf("conductor fields (-want +got):\n%s", d)
	}
	if one["conductor_group"] != "rack2" || one["links"].([]any)[0].(map[string]any)["href"] != "http://rivet.test/v1/conductors/cond-old" {
		t.Errorf("conductor = %v", one)
	}
	if d := cmp.Diff([]any{"ipmi"}, one["drivers"]); d != "" {
		t.Errorf("drivers (-want +got):\n%s", d)
	}
	detail := e.must(http.StatusOK, "GET", "/v1/conductors?detail=true", "1.49", nil).JSON(t)["conductors"].([]any)
	if d := cmp.Diff(sortedCopy(conductorFields), keysOf(detail[0].(map[string]any))); d != "" {
		t.Errorf("detail fields (-want +got):\n%s", d)
	}
	sel := e.must(http.StatusOK, "GET", "/v1/conductors/cond-a?fields=drivers", "1.49", nil).JSON(t)
	if d := cmp.Diff([]string{"drivers", "links"}, keysOf(sel)); d != "" {
		t.Errorf("fields=drivers (-want +got):\n%s", d)
	}

	// Paging by hostname, sorted by hostname.
	page := e.must(http.StatusOK, "GET", "/v1/conductors?limit=2&sort_key=hostname", "1.49", nil).JSON(t)
	if n := len(page["conductors"].([]any)); n != 2 {
		t.Fatalf("page of %d", n)
	}
	if want := "http://rivet.test/v1/conductors?sort_key=hostname&sort_dir=asc&limit=2&marker=cond-b"; page["next"] != want {
		t.Errorf("next = %v, want %s", page["next"], want)
	}
	rest := e.must(http.StatusOK, "GET", "/v1/conductors?limit=2&sort_key=hostname&marker=cond-b", "1.49", nil).JSON(t)["conductors"].([]any)
	if len(rest) != 2 || rest[0].(map[string]any)["hostname"] != "cond-off" || rest[1].(map[string]any)["hostname"] != "cond-old" {
		t.Errorf("second page = %v", rest)
	}

	// By heartbeat, newest first: cond-old (an hour ago) comes last.
	desc := e.must(http.StatusOK, "GET", "/v1/conductors?sort_key=updated_at&sort_dir=desc&limit=3", "1.49", nil).JSON(t)
	tail := e.must(http.StatusOK, "GET", "/v1/conductors?sort_key=updated_at&sort_dir=desc&limit=3&marker="+
		desc["conductors"].([]any)[2].(map[string]any)["hostname"].(string), "1.49", nil).JSON(t)["conductors"].([]any)
	if len(tail) != 1 || tail[0].(map[string]any)["hostname"] != "cond-old" {
		t.Errorf("last page by updated_at desc = %v", tail)
	}

	bad := map[string]string{
		"/v1/conductors/nope":                        "Conductor nope could not be found.",
		"/v1/conductors?marker=nope":                 "Conductor nope could not be found.",
		"/v1/conductors?sort_key=alive":              "The sort_key value alive is an invalid field for sorting",
		"/v1/conductors?sort_key=bogus":              `The sort_key value "bogus" is an invalid field for sorting`,
		"/v1/conductors?fields=bogus":                `Field(s) "bogus" are not valid`,
		"/v1/conductors?fields=hostname&detail=true": "Can not specify ?detail=True and fields in the same request.",
	}
	for path, want := range bad {
		r := e.do("GET", path, "1.49", nil)
		if r.Code/100 != 4 || r.Fault(t) != want {
			t.Errorf("%s: %d %q, want %q", path, r.Code, r.Fault(t), want)
		}
	}
}

func sortedCopy(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
}

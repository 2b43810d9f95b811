package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/uptrace/bun"
)

func TestLiveConductors(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		v := "1.0"
		now, err := dbh.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rows := []db.Conductor{
			{Hostname: "fresh", Online: true, Drivers: db.JSONStrings{"ipmi"}, Version: &v},
			{Hostname: "stale", Online: true, Drivers: db.JSONStrings{"ipmi"}, Version: &v},
			{Hostname: "offline", Online: false, Drivers: db.JSONStrings{"ipmi"}, Version: &v},
		}
		for i := range rows {
			if _, err := dbh.Bun().NewInsert().Model(&rows[i]).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		set := func(host string, at time.Time) {
			if _, err := dbh.Bun().NewUpdate().Table(db.TableConductors).Set("updated_at = ?", at).
				Where("? = ?", bun.Ident("hostname"), host).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		set("fresh", now)
		set("stale", now.Add(-2*time.Minute))
		set("offline", now)
		live, err := dbh.LiveConductors(ctx, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(live) != 1 || live[0].Hostname != "fresh" || live[0].Drivers[0] != "ipmi" {
			t.Fatalf("live conductors = %+v", live)
		}
	})
}

package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// SaveUnleased writes only while nobody holds the node's lease and nobody
// took it since the node was read: a lease taken and given back in
// between, or one held, leaves the row as its holder wrote it.
func TestSaveUnleased(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		reg := dbtest.Registry(t)
		s := db.NewStore(dbh, reg, release.NewPinner(dbtest.Releases(t), release.Pin{}))
		n := newNode(t, reg, "n-01")
		if err := s.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		read := func() (*objects.Node, int64) {
			t.Helper()
			got, epoch, err := s.GetNodeEpoch(ctx, n.UUID)
			if err != nil {
				t.Fatal(err)
			}
			return got, epoch
		}
		setKey := func(n *objects.Node, v string) {
			dii := map[string]any{}
			for k, x := range n.DriverInternalInfo {
				dii[k] = x
			}
			dii["agent_url"] = v
			n.DriverInternalInfo = dii
		}

		// Leased and given back since the read: refused.
		stale, epoch := read()
		e, err := dbh.AcquireLease(ctx, n.UUID, "cond-a", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		held, _ := read()
		setKey(held, "under-lease")
		if err := s.SaveFenced(ctx, held, "cond-a", e); err != nil {
			t.Fatal(err)
		}
		if err := dbh.ReleaseLease(ctx, n.UUID, "cond-a", e); err != nil {
			t.Fatal(err)
		}
		setKey(stale, "stale")
		if err := s.SaveUnleased(ctx, stale, epoch); !errors.Is(err, db.ErrLeaseLost) {
			t.Fatalf("save after a lease came and went: %v, want ErrLeaseLost", err)
		}

		// Leased now: refused, even with the epoch read under the lease.
		e, err = dbh.AcquireLease(ctx, n.UUID, "cond-a", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		during, epoch := read()
		setKey(during, "during")
		if err := s.SaveUnleased(ctx, during, epoch); !errors.Is(err, db.ErrLeaseLost) {
			t.Fatalf("save while leased: %v, want ErrLeaseLost", err)
		}
		if err := dbh.ReleaseLease(ctx, n.UUID, "cond-a", e); err != nil {
			t.Fatal(err)
		}
		if got, _ := read(); got.DriverInternalInfo["agent_url"] != "under-lease" {
			t.Fatalf("agent_url %v, want the lease holder's", got.DriverInternalInfo["agent_url"])
		}

		// Free and untouched since the read: written, and the lease
		// stays free with the same epoch.
		fresh, epoch := read()
		setKey(fresh, "fresh")
		if err := s.SaveUnleased(ctx, fresh, epoch); err != nil {
			t.Fatal(err)
		}
		got, after := read()
		if got.DriverInternalInfo["agent_url"] != "fresh" || got.Reservation != nil || after != epoch {
			t.Fatalf("agent_url %v, reservation %v, epoch %d→%d", got.DriverInternalInfo["agent_url"], got.Reservation, epoch, after)
		}
	})
}

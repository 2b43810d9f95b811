package db_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// The finalized-release watermark is absent at first, only moves up, and
// of concurrent advances the highest wins.
func TestFinalizedReleaseMonotonic(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		if fr, err := dbh.FinalizedRelease(ctx); err != nil || fr != nil {
			t.Fatalf("fresh database: %+v, %v; want none", fr, err)
		}
		steps := []struct {
			release      string
			sv           int
			wantAdvanced bool
			want         string
		}{
			{"0.1", 1, true, "0.1/1"},
			{"0.1", 1, false, "0.1/1"},
			{"0.2.0.dev", 2, true, "0.2.0.dev/2"},
			{"0.2", 2, false, "0.2.0.dev/2"}, // same service version: the first stays
			{"0.1", 1, false, "0.2.0.dev/2"}, // never lowered
			{"0.3", 3, true, "0.3/3"},
		}
		for _, s := range steps {
			fr, advanced, err := dbh.AdvanceFinalizedRelease(ctx, s.release, s.sv)
			if err != nil {
				t.Fatalf("advance to %s/%d: %v", s.release, s.sv, err)
			}
			got := fmt.Sprintf("%s/%d", fr.Release, fr.ServiceVersion)
			if advanced != s.wantAdvanced || got != s.want {
				t.Fatalf("advance to %s/%d: advanced %v, now %s; want %v, %s", s.release, s.sv, advanced, got, s.wantAdvanced, s.want)
			}
			read, err := dbh.FinalizedRelease(ctx)
			if err != nil || read.Release != fr.Release || read.ServiceVersion != fr.ServiceVersion || read.UpdatedAt.IsZero() {
				t.Fatalf("read back %+v, %v; want %s", read, err, s.want)
			}
		}
		if _, _, err := dbh.AdvanceFinalizedRelease(ctx, "0.4", 0); err == nil {
			t.Error("service version 0 was accepted")
		}
		if _, _, err := dbh.AdvanceFinalizedRelease(ctx, "", 4); err == nil {
			t.Error("an empty release was accepted")
		}
	})
}

func TestFinalizedReleaseConcurrentAdvances(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		advancedBy := make(chan int, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sv := n - i // lower advances racing a higher one must not undo it
				fr, advanced, err := dbh.AdvanceFinalizedRelease(ctx, fmt.Sprintf("0.%d", sv), sv)
				if err != nil {
					errs <- err
					return
				}
				if fr.ServiceVersion < sv {
					errs <- fmt.Errorf("advance to %d returned %d", sv, fr.ServiceVersion)
				}
				if advanced {
					advancedBy <- sv
				}
			}()
		}
		wg.Wait()
		close(errs)
		close(advancedBy)
		for err := range errs {
			t.Error(err)
		}
		fr, err := dbh.FinalizedRelease(ctx)
		if err != nil || fr == nil || fr.ServiceVersion != n || fr.Release != fmt.Sprintf("0.%d", n) {
			t.Fatalf("after concurrent advances: %+v, %v; want 0.%d/%d", fr, err, n, n)
		}
		if len(advancedBy) == 0 {
			t.Fatal("no advance reported moving the watermark")
		}
	})
}

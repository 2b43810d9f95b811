package workers

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestConfigValidate(t *testing.T) {
	tests := map[string]struct {
		cfg     Config
		wantErr bool
	}{
		"default":               {cfg: DefaultConfig()},
		"no reserve":            {cfg: Config{Size: 1}},
		"zero size":             {cfg: Config{Size: 0}, wantErr: true},
		"negative reserve":      {cfg: Config{Size: 4, ReservedForAPI: -1}, wantErr: true},
		"reserve takes all":     {cfg: Config{Size: 4, ReservedForAPI: 4}, wantErr: true},
		"reserve leaves one":    {cfg: Config{Size: 4, ReservedForAPI: 3}},
		"reserve exceeds total": {cfg: Config{Size: 2, ReservedForAPI: 5}, wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err != nil) != tc.wantErr {
				t.Fatalf("Validate() = %v, want error: %v", err, tc.wantErr)
			}
			if _, nerr := New(tc.cfg); (nerr != nil) != tc.wantErr {
				t.Fatalf("New() = %v, want error: %v", nerr, tc.wantErr)
			}
		})
	}
}

// With periodic work holding every worker it may use, API tasks still start
// at once on the reserved ones; once those are taken too, the next API task
// fails at once with the 503-class error instead of waiting.
func TestReservedShare(t *testing.T) {
	tests := map[string]Config{
		"4 with 1 reserved":  {Size: 4, ReservedForAPI: 1},
		"10 with 3 reserved": {Size: 10, ReservedForAPI: 3},
		"3 with none":        {Size: 3},
	}
	for name, cfg := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				hold := make(chan struct{})
				ctx := context.Background()
				share := cfg.Size - cfg.ReservedForAPI
				for range share {
					if err := p.Periodic(ctx, func() { <-hold }); err != nil {
						t.Fatalf("Periodic within share: %v", err)
					}
				}
				// Periodic work is saturated: one more waits until its deadline.
				wctx, cancel := context.WithTimeout(ctx, time.Second)
				if err := p.Periodic(wctx, func() { t.Error("periodic work beyond its share ran") }); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Periodic beyond share = %v, want DeadlineExceeded", err)
				}
				cancel()

				start := time.Now()
				for i := range cfg.ReservedForAPI {
					if err := p.TryAPI(func() { <-hold }); err != nil {
						t.Fatalf("TryAPI %d with periodic saturated: %v", i, err)
					}
				}
				err = p.TryAPI(func() { t.Error("API task ran on a full pool") })
				if !errors.Is(err, ErrNoFreeWorker) {
					t.Fatalf("TryAPI on full pool = %v, want ErrNoFreeWorker", err)
				}
				if waited := time.Since(start); waited != 0 {
					t.Errorf("API admission waited %v on fake clock, want 0", waited)
				}
				var classed interface {
					ErrorClass() string
					HTTPCode() int
				}
				if !errors.As(err, &classed) || classed.HTTPCode() != http.StatusServiceUnavailable || classed.ErrorClass() != "NoFreeConductorWorker" {
					t.Errorf("ErrNoFreeWorker does not carry NoFreeConductorWorker/503: %v", err)
				}
				want := Stats{Size: cfg.Size, ReservedForAPI: cfg.ReservedForAPI, API: cfg.ReservedForAPI, Periodic: share}
				if diff := cmp.Diff(want, p.Stats()); diff != "" {
					t.Errorf("Stats (-want +got):\n%s", diff)
				}
				close(hold)
				if err := p.Close(ctx); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(Stats{Size: cfg.Size, ReservedForAPI: cfg.ReservedForAPI}, p.Stats()); diff != "" {
					t.Errorf("Stats after Close (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// API tasks may use workers periodic work is not using; periodic work that
// waits starts as soon as a worker within its share frees up.
func TestSharing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := New(Config{Size: 3, ReservedForAPI: 1})
		hold := make(chan struct{})
		for i := range 3 {
			if err := p.TryAPI(func() { <-hold }); err != nil {
				t.Fatalf("API task %d on an idle pool: %v", i, err)
			}
		}
		started := make(chan struct{})
		errc := make(chan error, 1)
		go func() { errc <- p.Periodic(context.Background(), func() { close(started) }) }()
		synctest.Wait()
		select {
		case <-started:
			t.Fatal("periodic work started on a full pool")
		default:
		}
		hold <- struct{}{} // one API task finishes
		if err := <-errc; err != nil {
			t.Fatalf("Periodic after a worker freed up: %v", err)
		}
		<-started
		close(hold)
		_ = p.Close(context.Background())
	})
}

func TestClose(t *testing.T) {
	tests := map[string]struct {
		closeWithin time.Duration
		runFor      time.Duration
		wantErr     error
	}{
		"waits for running work":    {closeWithin: time.Minute, runFor: 5 * time.Second},
		"gives up at its deadline":  {closeWithin: time.Second, runFor: 5 * time.Second, wantErr: context.DeadlineExceeded},
		"returns at once when idle": {closeWithin: time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, _ := New(Config{Size: 2, ReservedForAPI: 1})
				finished := false
				if tc.runFor > 0 {
					if err := p.Periodic(context.Background(), func() { time.Sleep(tc.runFor); finished = true }); err != nil {
						t.Fatal(err)
					}
				}
				// A periodic waiter (the share is 1) is released by Close.
				waiter := make(chan error, 1)
				go func() { waiter <- p.Periodic(context.Background(), func() {}) }()
				synctest.Wait()

				ctx, cancel := context.WithTimeout(context.Background(), tc.closeWithin)
				defer cancel()
				start := time.Now()
				err := p.Close(ctx)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Close = %v, want %v", err, tc.wantErr)
				}
				if tc.wantErr == nil && tc.runFor > 0 && (!finished || time.Since(start) != tc.runFor) {
					t.Errorf("Close returned after %v (work finished: %v), want after the work's %v", time.Since(start), finished, tc.runFor)
				}
				if werr := <-waiter; tc.runFor > 0 && !errors.Is(werr, ErrClosed) {
					t.Errorf("waiting Periodic = %v, want ErrClosed", werr)
				}
				if err := p.TryAPI(func() {}); !errors.Is(err, ErrClosed) {
					t.Errorf("TryAPI after Close = %v, want ErrClosed", err)
				}
				if err := p.Periodic(context.Background(), func() {}); !errors.Is(err, ErrClosed) {
					t.Errorf("Periodic after Close = %v, want ErrClosed", err)
				}
				time.Sleep(tc.runFor) // let abandoned work end inside the bubble
			})
		})
	}
}

package powersync

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// An out-of-band change is recorded once (the next cycle sees it recorded);
// an unchanged state is never recorded; a failed write is retried.
func TestOutOfBandChange(t *testing.T) {
	tests := map[string]struct {
		recorded, actual string
		failWrites       int
		want             [][]change // per cycle
		wantRecordErrors []int
	}{
		"change recorded once": {
			recorded: "power on", actual: "power off",
			want:             [][]change{{{"node-00000", "power on", "power off"}}, nil, nil},
			wantRecordErrors: []int{0, 0, 0},
		},
		"unchanged not recorded": {
			recorded: "power on", actual: "power on",
			want:             [][]change{nil, nil},
			wantRecordErrors: []int{0, 0},
		},
		"first sync of a never-synced node": {
			recorded: "", actual: "power off",
			want:             [][]change{{{"node-00000", "", "power off"}}, nil},
			wantRecordErrors: []int{0, 0},
		},
		"failed write retried next cycle": {
			recorded: "power on", actual: "power off", failWrites: 1,
			want: [][]change{
				{{"node-00000", "power on", "power off"}},
				{{"node-00000", "power on", "power off"}},
				nil,
			},
			wantRecordErrors: []int{1, 0, 0},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ns := nodes(1, ownBMC)
				ns[0].PowerState = tc.recorded
				r := newRig(t, testConfig(2), ns, time.Millisecond, nil)
				r.bmcs.actual["node-00000"] = tc.actual
				r.rec.failWrites = tc.failWrites
				for i, want := range tc.want {
					before := len(r.rec.changes)
					st, err := r.s.RunOnce(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					got := r.rec.changes[before:]
					if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("cycle %d changes (-want +got):\n%s", i+1, diff)
					}
					if st.Changed != len(want) || st.RecordErrors != tc.wantRecordErrors[i] {
						t.Errorf("cycle %d: Changed %d RecordErrors %d, want %d, %d", i+1, st.Changed, st.RecordErrors, len(want), tc.wantRecordErrors[i])
					}
				}
			})
		})
	}
}

// Maintenance, locked and duplicate nodes are skipped and counted; failure
// counts are consecutive per node and reported back on recovery.
func TestSkipsAndFailureCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ns := []Node{
			{UUID: "maint", BMC: "b1", Maintenance: true},
			{UUID: "locked", BMC: "b2", Locked: true},
			{UUID: "flaky", BMC: "b3", PowerState: "power on"},
			{UUID: "flaky", BMC: "b3", PowerState: "power on"},
			{UUID: "ok", PowerState: "power on"}, // no BMC key: its own
		}
		r := newRig(t, testConfig(4), ns, time.Millisecond, nil)
		r.bmcs.failing["b3"] = errors.New("connection refused")
		for range 3 {
			st, err := r.s.RunOnce(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := Stats{Nodes: 4, BMCs: 4, Probed: 2, Failed: 1, Workers: 2,
				Skipped: Skipped{Maintenance: 1, Locked: 1, Duplicate: 1}}
			if diff := cmp.Diff(want, st, cmpopts.IgnoreFields(Stats{}, "Started", "Duration", "Busy", "Bound")); diff != "" {
				t.Errorf("stats (-want +got):\n%s", diff)
			}
		}
		setMaintenance := func(on bool) {
			r.src.mu.Lock()
			defer r.src.mu.Unlock()
			r.src.nodes[2].Maintenance, r.src.nodes[3].Maintenance = on, on
		}
		// Recovery and maintenance each start the count afresh.
		steps := []func(){
			func() { r.bmcs.set(func(f *fakeBMCs) { delete(f.failing, "b3") }) },
			func() { r.bmcs.set(func(f *fakeBMCs) { f.failing["b3"] = errors.New("connection refused") }) },
			func() {},
			func() { setMaintenance(true) },
			func() { setMaintenance(false) },
		}
		for _, step := range steps {
			step()
			if _, err := r.s.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		wantFailures := []failure{{"flaky", 1}, {"flaky", 2}, {"flaky", 3}, {"flaky", 1}, {"flaky", 2}, {"flaky", 1}}
		if diff := cmp.Diff(wantFailures, r.rec.failures); diff != "" {
			t.Errorf("ProbeFailed calls (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]int{"flaky": 3}, r.rec.recovered); diff != "" {
			t.Errorf("ProbeRecovered calls (-want +got):\n%s", diff)
		}
		if got := r.bmcs.probes(); got["maint"]+got["locked"] != 0 {
			t.Errorf("skipped nodes were probed: %v", got)
		}
	})
}

// What a Prober answers decides a probe's outcome; errors name the node and
// keep their cause for errors.Is.
func TestProbeOutcomes(t *testing.T) {
	refused := errors.New("connection refused")
	tests := map[string]struct {
		answer     func(ctx context.Context) (string, error)
		wantErr    error // nil: success
		wantChange bool
	}{
		"same state":      {answer: func(context.Context) (string, error) { return "power on", nil }},
		"other state":     {answer: func(context.Context) (string, error) { return "power off", nil }, wantChange: true},
		"driver error":    {answer: func(context.Context) (string, error) { return "", refused }, wantErr: refused},
		"empty state":     {answer: func(context.Context) (string, error) { return "", nil }, wantErr: ErrNoState},
		"deadline passed": {answer: func(ctx context.Context) (string, error) { return "", sleep(ctx, time.Hour) }, wantErr: ErrTimeout},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRig(t, testConfig(1), nodes(1, ownBMC), 0, nil)
				r.bmcs.custom["node-00000"] = tc.answer
				st, err := r.s.RunOnce(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if tc.wantErr == nil {
					if st.Failed != 0 || (st.Changed == 1) != tc.wantChange {
						t.Errorf("failed %d changed %d, want 0 failed, change %v", st.Failed, st.Changed, tc.wantChange)
					}
					return
				}
				if st.Failed != 1 || len(r.rec.errs) != 1 {
					t.Fatalf("failed %d with errors %v, want 1", st.Failed, r.rec.errs)
				}
				if err := r.rec.errs[0]; !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), "node-00000") {
					t.Errorf("error %q, want one naming node-00000 and wrapping %v", err, tc.wantErr)
				}
			})
		})
	}
}

// A Source error fails the cycle (wrapped) without calling CycleDone; Run
// keeps its schedule and tries again next interval.
func TestSourceError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dbDown := errors.New("database unavailable")
		rec := newFakeRecorder(&fakeSource{})
		calls := 0
		src := sourceFunc(func(context.Context) ([]Node, error) { calls++; return nil, dbDown })
		s, err := New(testConfig(1), Deps{Source: src, Prober: newFakeBMCs(0), Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.RunOnce(context.Background()); !errors.Is(err, dbDown) {
			t.Errorf("RunOnce = %v, want it to wrap %v", err, dbDown)
		}
		go s.Run(context.Background())
		time.Sleep(testConfig(1).Interval * 5 / 2) // cycles at 0, 1 and 2 intervals
		if err := s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if calls != 4 || len(rec.stats()) != 0 {
			t.Errorf("Source called %d times, %d cycles reported; want 4, 0", calls, len(rec.stats()))
		}
	})
}

type sourceFunc func(context.Context) ([]Node, error)

func (f sourceFunc) Nodes(ctx context.Context, add func(Node)) error {
	ns, err := f(ctx)
	for _, n := range ns {
		add(n)
	}
	return err
}

package onlinemigrations

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/db"
)

// fake is an in-memory migration over n objects that records its budgets.
type fake struct {
	left    int
	budgets []int
}

func (f *fake) run(_ context.Context, _ *db.DB, maxCount int, _ map[string]string) (int, int, error) {
	f.budgets = append(f.budgets, maxCount)
	total := f.left
	done := total
	if maxCount > 0 {
		done = min(total, maxCount)
	}
	f.left -= done
	return total, done, nil
}

// TestRunBudget checks ironic-dbsync's accounting: each migration gets what
// is left of the budget; reaching it ends the pass unfinished (no
// look-ahead); without --max-count passes of the runner's batch size (50
// here, as ironic-dbsync's) run until one migrates less.
func TestRunBudget(t *testing.T) {
	tests := map[string]struct {
		a, b        int // objects to migrate
		maxCount    int
		finished    bool
		budgetsA    []int
		budgetsB    []int
		lines       string
		leftA, left int
	}{
		"budget spans migrations": {a: 3, b: 2, maxCount: 4, finished: false, budgetsA: []int{4}, budgetsB: []int{1},
			lines: "a() migrated 3 of 3 objects.\nb() migrated 1 of 2 objects.\n", left: 1},
		"budget exhausted by first": {a: 5, b: 2, maxCount: 5, finished: false, budgetsA: []int{5},
			lines: "a() migrated 5 of 5 objects.\n", left: 2},
		"exact budget has no look-ahead": {a: 1, b: 1, maxCount: 2, finished: false, budgetsA: []int{2}, budgetsB: []int{1},
			lines: "a() migrated 1 of 1 objects.\nb() migrated 1 of 1 objects.\n"},
		"under budget": {a: 1, b: 1, maxCount: 3, finished: true, budgetsA: []int{3}, budgetsB: []int{2},
			lines: "a() migrated 1 of 1 objects.\nb() migrated 1 of 1 objects.\n"},
		"batches": {a: 70, b: 40, finished: true, budgetsA: []int{50, 50, 50}, budgetsB: []int{30, 50},
			lines: "Running batches of 50 until migrations have been completed.\n" +
				"a() migrated 50 of 70 objects.\n" +
				"a() migrated 20 of 20 objects.\nb() migrated 30 of 40 objects.\n" +
				"a() migrated 0 of 0 objects.\nb() migrated 10 of 10 objects.\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, b := &fake{left: tc.a}, &fake{left: tc.b}
			r := &Registry{}
			_ = r.Register(Migration{Name: "a", Run: a.run})
			_ = r.Register(Migration{Name: "b", Run: b.run})
			var out bytes.Buffer
			finished, err := (&Runner{Registry: r, Report: LineReporter{&out}, BatchSize: 50}).Run(context.Background(), tc.maxCount, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := []any{finished, a.budgets, b.budgets, out.String(), b.left}
			want := []any{tc.finished, tc.budgetsA, tc.budgetsB, tc.lines, tc.left}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Without a batch size the runner uses BatchSize.
func TestRunDefaultBatchSize(t *testing.T) {
	a := &fake{left: BatchSize + 1}
	r := &Registry{}
	_ = r.Register(Migration{Name: "a", Run: a.run})
	var out bytes.Buffer
	if finished, err := (&Runner{Registry: r, Report: LineReporter{&out}}).Run(context.Background(), 0, nil); err != nil || !finished {
		t.Fatalf("finished=%v err=%v", finished, err)
	}
	if diff := cmp.Diff([]int{BatchSize, BatchSize}, a.budgets); diff != "" {
		t.Errorf("budgets (-want +got):\n%s", diff)
	}
	if want := fmt.Sprintf("Running batches of %d until", BatchSize); !strings.HasPrefix(out.String(), want) {
		t.Errorf("output %q, want it to begin %q", out.String(), want)
	}
}

func TestRunRejectsOverspendingMigration(t *testing.T) {
	r := &Registry{}
	_ = r.Register(Migration{Name: "greedy", Run: func(context.Context, *db.DB, int, map[string]string) (int, int, error) {
		return 100, 100, nil
	}})
	_, err := (&Runner{Registry: r}).Run(context.Background(), 10, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "Error while running greedy: reported 100 of 100 migrated with a budget of 10") {
		t.Errorf("err = %v", err)
	}
}

func TestBarReporterSummarises(t *testing.T) {
	var out bytes.Buffer
	b := NewBarReporter(&out)
	b.Batches(50)
	b.Migrated("a", 50, 70)
	b.Migrated("a", 20, 20)
	b.Migrated("b", 0, 0)
	b.Finish()
	s := out.String()
	for _, want := range []string{"Running batches of 50", "a() migrated 70 of 70 objects.\n", "b() migrated 0 of 0 objects.\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%q", want, s)
		}
	}
}

package onlinemigrations

import (
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"
)

// Reporter shows a run's progress.
type Reporter interface {
	// Batches announces a run in passes of size until done.
	Batches(size int)
	// Migrated reports one call of a migration: migrated of total.
	Migrated(name string, migrated, total int)
	// Finish ends the report.
	Finish()
}

type nopReporter struct{}

func (nopReporter) Batches(int)               {}
func (nopReporter) Migrated(string, int, int) {}
func (nopReporter) Finish()                   {}

// LineReporter prints ironic-dbsync's lines, for logs and pipes.
type LineReporter struct{ W io.Writer }

// Batches prints "Running batches of <size> until migrations have been completed."
func (l LineReporter) Batches(size int) {
	fmt.Fprintf(l.W, "Running batches of %d until migrations have been completed.\n", size)
}

// Migrated prints "<name>() migrated <migrated> of <total> objects."
func (l LineReporter) Migrated(name string, migrated, total int) {
	fmt.Fprintf(l.W, "%s() migrated %d of %d objects.\n", name, migrated, total)
}

// Finish does nothing.
func (LineReporter) Finish() {}

// BarReporter draws one progress bar per migration on a terminal and, when
// done, prints one line per migration with its totals for the whole run.
type BarReporter struct {
	w     io.Writer
	order []string
	runs  map[string]*barRun
}

type barRun struct {
	bar      *progressbar.ProgressBar
	total    int // objects needing migration at the first call
	migrated int
}

// NewBarReporter returns a BarReporter drawing on w (a terminal).
func NewBarReporter(w io.Writer) *BarReporter {
	return &BarReporter{w: w, runs: map[string]*barRun{}}
}

// Batches prints the batch announcement once.
func (b *BarReporter) Batches(size int) { LineReporter{b.w}.Batches(size) }

// Migrated advances the migration's bar.
func (b *BarReporter) Migrated(name string, migrated, total int) {
	run := b.runs[name]
	if run == nil {
		run = &barRun{total: total}
		b.runs[name] = run
		b.order = append(b.order, name)
	}
	if run.bar == nil && run.total > 0 {
		run.bar = progressbar.NewOptions(run.total,
			progressbar.OptionSetWriter(b.w),
			progressbar.OptionSetDescription(name+"()"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish())
	}
	run.migrated += migrated
	if run.bar != nil {
		_ = run.bar.Set(min(run.migrated, run.total))
	}
}

// Finish clears the bars and prints the totals.
func (b *BarReporter) Finish() {
	for _, name := range b.order {
		run := b.runs[name]
		if run.bar != nil {
			_ = run.bar.Finish()
		}
		fmt.Fprintf(b.w, "%s() migrated %d of %d objects.\n", name, run.migrated, run.total)
	}
}

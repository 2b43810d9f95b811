package upgrade

import (
	"fmt"
	"io"
	"sync"
	"text/tabwriter"
	"time"
)

// runSummary is one run's line of the closing table.
type runSummary struct {
	name                      string
	took                      time.Duration
	requests, retries, errors int
	unacked                   int // writes a fault left unacknowledged
	writes, fieldWrites       int64
	markers, fields           int // read back at the end
	failed                    bool
}

var (
	summariesMu sync.Mutex
	summaries   []runSummary
)

// summarize records the run's line of the closing table.
func (r *run) summarize(markers, fields int) {
	req, ret, errs := r.rec.totals()
	s := runSummary{name: r.t.Name(), took: time.Since(r.began), requests: req, retries: ret, errors: errs,
		unacked: len(r.rec.explained), writes: r.l.writes.Load(), fieldWrites: r.l.fieldWrites.Load(),
		markers: markers, fields: fields, failed: r.t.Failed()}
	summariesMu.Lock()
	summaries = append(summaries, s)
	summariesMu.Unlock()
}

// printSummaries writes the closing table: one line per run.
func printSummaries(w io.Writer) {
	summariesMu.Lock()
	defer summariesMu.Unlock()
	if len(summaries) == 0 {
		return
	}
	fmt.Fprintln(w, "rolling-upgrade runs (requests through the load balancer; writes acknowledged and read back):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tseconds\trequests\tretries\terrors\tunacked\tmarker writes\tnew-field writes\tread back\tresult\t")
	for _, s := range summaries {
		result := "ok"
		if s.failed {
			result = "FAILED"
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%d\t%d\t%d\t%d\t%d\t%d\t%d+%d\t%s\t\n", s.name, s.took.Seconds(), s.requests, s.retries,
			s.errors, s.unacked, s.writes, s.fieldWrites, s.markers, s.fields, result)
	}
	tw.Flush()
}

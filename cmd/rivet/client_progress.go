package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/jedib0t/go-pretty/v6/progress"
	"github.com/rivetmetal/rivet/core/client"
	"golang.org/x/term"
)

// waitReporter shows waits as they go: a progress display on a terminal,
// plain lines (one per state change) otherwise, so logs stay readable.
type waitReporter interface {
	// poll is called with each poll's states of ident.
	poll(ident string, states client.Resource)
	// done ends ident's display.
	done(ident string, err error)
	// stop ends the whole display.
	stop()
}

func newWaitReporter(w io.Writer, state string) waitReporter {
	if isTerminalWriter(w) {
		return newBarWaitReporter(w, state)
	}
	return &lineWaitReporter{w: w, want: state, last: map[string]string{}}
}

func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// lineWaitReporter prints "node n1: deploying (waiting for active)" on
// each change of state.
type lineWaitReporter struct {
	w    io.Writer
	want string
	mu   sync.Mutex
	last map[string]string
}

func (r *lineWaitReporter) poll(ident string, st client.Resource) {
	state := st.String("provision_state")
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last[ident] == state {
		return
	}
	r.last[ident] = state
	fmt.Fprintf(r.w, "node %s: %s (waiting for %s)\n", ident, state, r.want)
}

func (r *lineWaitReporter) done(string, error) {}
func (r *lineWaitReporter) stop()              {}

// barWaitReporter drives go-pretty's progress writer, one tracker per node.
type barWaitReporter struct {
	pw   progress.Writer
	want string
	mu   sync.Mutex
	bars map[string]*progress.Tracker
}

func newBarWaitReporter(w io.Writer, state string) *barWaitReporter {
	pw := progress.NewWriter()
	pw.SetOutputWriter(w)
	pw.SetAutoStop(false)
	pw.SetUpdateFrequency(100 * time.Millisecond)
	pw.SetStyle(progress.StyleDefault)
	pw.Style().Visibility.ETA = false
	pw.Style().Visibility.Percentage = false
	pw.Style().Visibility.Value = false
	go pw.Render()
	return &barWaitReporter{pw: pw, want: state, bars: map[string]*progress.Tracker{}}
}

func (r *barWaitReporter) tracker(ident string) *progress.Tracker {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.bars[ident]
	if !ok {
		t = &progress.Tracker{Message: "node " + ident}
		r.bars[ident] = t
		r.pw.AppendTracker(t)
	}
	return t
}

func (r *barWaitReporter) poll(ident string, st client.Resource) {
	msg := fmt.Sprintf("node %s: %s → %s", ident, st.String("provision_state"), r.want)
	if st.String("provision_state") == r.want {
		msg = fmt.Sprintf("node %s: %s", ident, r.want)
	}
	r.tracker(ident).UpdateMessage(msg)
}

func (r *barWaitReporter) done(ident string, err error) {
	t := r.tracker(ident)
	if err != nil {
		t.MarkAsErrored()
		return
	}
	t.MarkAsDone()
}

func (r *barWaitReporter) stop() {
	r.pw.Stop()
	for r.pw.IsRenderInProgress() {
		time.Sleep(20 * time.Millisecond)
	}
}

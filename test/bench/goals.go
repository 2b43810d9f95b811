package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// The goals run (`bench suite --goals`) measures issue 32's goals side by
// side, in --rounds alternating rounds. Each round:
//
//  1. rivet dev (embedded SQLite, in-process RPC): enroll --nodes nodes,
//     then wrk-get and wrk-detail;
//  2. with --ironic, Debian's Ironic 21.4 on PostgreSQL: the same;
//  3. enroll of --enroll-nodes nodes on PostgreSQL through the split
//     deployment (rivet api + rivet conductor, JSON-RPC) and through
//     rivet all-in-one, one after the other, the order swapped every round.
//
// Every target starts fresh (a new state directory or database) and is
// stopped before the next one starts, so none idles beside another's
// measurement. With --memory-goal, the powersync workload at
// --memory-nodes nodes follows, for the conductor's memory and its power
// sync cycle. The agent deploy figure is not run here: it is a Go test of
// core/conductor (docs/performance.md, "Agent deploys").

// TargetRun is one target's figures in one round.
type TargetRun struct {
	Target  string   `json:"target"`
	Round   int      `json:"round"`
	Results []Result `json:"results"`
	// Memory sums the target's processes after the workloads.
	Memory Memory `json:"memory"`
	Load   string `json:"load_start"`
}

// Stat is the median and the range of a figure over the rounds.
type Stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

func statOf(v []float64) *Stat {
	if len(v) == 0 {
		return nil
	}
	s := &Stat{Median: median(v), Min: v[0], Max: v[0], N: len(v)}
	for _, x := range v {
		s.Min, s.Max = math.Min(s.Min, x), math.Max(s.Max, x)
	}
	return s
}

// Goal is one row of the goals table: Rivet's figure, the baseline's
// (Ironic's, or all-in-one's for the split enroll) from the same run, the
// ratio taken round by round, and the target.
type Goal struct {
	Name     string `json:"name"`
	Unit     string `json:"unit"`
	Figure   *Stat  `json:"figure,omitempty"`
	Baseline string `json:"baseline,omitempty"`
	Base     *Stat  `json:"baseline_figure,omitempty"`
	Ratio    *Stat  `json:"ratio,omitempty"`
	Target   string `json:"target"`
	// Met is "met", "not met", or "-" (no target, or not measured).
	Met  string `json:"met"`
	Note string `json:"note,omitempty"`
}

// GoalsReport is what the goals run prints.
type GoalsReport struct {
	Machine     string           `json:"machine"`
	CPU         string           `json:"cpu"`
	Cores       int              `json:"cores"`
	Commit      string           `json:"commit"`
	Date        string           `json:"date"`
	LoadStart   string           `json:"load_start"`
	LoadEnd     string           `json:"load_end"`
	Rounds      int              `json:"rounds"`
	Nodes       int              `json:"nodes"`
	EnrollNodes int              `json:"enroll_nodes"`
	Runs        []TargetRun      `json:"runs"`
	Goals       []Goal           `json:"goals"`
	PowerSync   *PowerSyncResult `json:"powersync,omitempty"`
}

// Target names of the runs.
const (
	targetDev      = "rivet dev"
	targetIronic   = "Ironic 21.4"
	targetSplit    = "rivet split (PostgreSQL)"
	targetAllInOne = "rivet all-in-one (PostgreSQL)"
)

// cpuInfo is the CPU model and the number of processors in /proc/cpuinfo.
func cpuInfo() (model string, cores int) {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown", 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "processor":
			cores++
		case "model name":
			if model == "" {
				model = strings.TrimSpace(v)
			}
		}
	}
	if model == "" {
		model = "unknown"
	}
	return model, cores
}

// goalsRun runs the rounds and computes the goals.
func (s *suite) goalsRun(ctx context.Context, rep *GoalsReport) error {
	for round := 1; round <= s.o.rounds; round++ {
		reads := []string{"wrk-get", "wrk-detail"}
		var floor floorResponses
		var after func(*bench) error
		if s.o.floor {
			after = func(b *bench) (err error) {
				b.mu.Lock()
				uuids := append([]string(nil), b.nodes[:min(len(b.nodes), wrkGetNodes)]...)
				b.mu.Unlock()
				floor, err = fetchFloorResponses(ctx, b.c, uuids)
				return err
			}
		}
		if err := s.measure(ctx, rep, round, target{name: targetDev, nodes: s.o.nodes, reads: reads, after: after, start: func() (*service, error) {
			return startDev(ctx, s.bin, s.dir)
		}}); err != nil {
			return err
		}
		if s.o.floor {
			// Right after rivet dev, rivet dev stopped: the same wrk-get
			// on the same nodes' bytes.
			if err := s.measure(ctx, rep, round, target{name: targetFloor, enrolled: floor.uuids(), reads: []string{"wrk-get"}, start: func() (*service, error) {
				return startFloor(ctx, floor, s.dir)
			}}); err != nil {
				return err
			}
		}
		if s.o.ironic {
			if err := s.measure(ctx, rep, round, target{name: targetIronic, nodes: s.o.nodes, reads: reads, start: func() (*service, error) {
				return startIronic(ctx, s.srv, s.o.ironicPython, s.dir)
			}}); err != nil {
				return err
			}
		}
		pair := []bool{false, true} // all-in-one?
		if round%2 == 0 {
			pair = []bool{true, false}
		}
		for _, aio := range pair {
			name := targetSplit
			if aio {
				name = targetAllInOne
			}
			if err := s.measure(ctx, rep, round, target{name: name, nodes: s.o.enrollNodes, start: func() (*service, error) {
				d, err := up(ctx, s.srv, s.bin, s.dir, deployConfig{allInOne: aio})
				if err != nil {
					return nil, err
				}
				return deploymentService(name, d), nil
			}}); err != nil {
				return err
			}
		}
	}
	if s.o.memoryGoal {
		o := s.o
		o.psNodes = s.o.memoryNodes
		ms := &suite{o: o, srv: s.srv, bin: s.bin, dir: s.dir, live: s.live, log: s.log}
		r, err := ms.runPowerSync(ctx, s.o.psWorkers[0])
		if err != nil {
			return fmt.Errorf("memory goal, powersync of %d nodes: %w", o.psNodes, err)
		}
		s.logf("%s", r)
		rep.PowerSync = &r
	}
	return nil
}

// target is what measure runs against one server.
type target struct {
	name string
	// nodes are enrolled before the reads, unless enrolled names nodes
	// the server already holds (the machine floor's paths).
	nodes    int
	enrolled []string
	reads    []string
	// after, when not nil, is called with the bench after the reads,
	// before the server stops.
	after func(*bench) error
	start func() (*service, error)
}

// measure starts a target, enrolls its nodes, runs the read workloads,
// calls its after hook, reads its memory and stops it.
func (s *suite) measure(ctx context.Context, rep *GoalsReport, round int, t target) error {
	name, n, start := t.name, t.nodes, t.start
	s.logf("round %d: %s: starting", round, name)
	run := TargetRun{Target: name, Round: round, Load: loadavg()}
	svc, err := start()
	if err != nil {
		return fmt.Errorf("round %d, %s: %w", round, name, err)
	}
	s.services[svc] = true
	defer func() {
		for _, err := range svc.stop() {
			s.logf("stopping %s: %v", name, err)
		}
		delete(s.services, svc)
	}()
	o := s.benchOptions(svc.url, n)
	b := &bench{c: newClient(o), o: o}
	work := append([]string{"enroll"}, t.reads...)
	if t.enrolled != nil {
		work = t.reads
		b.nodes = t.enrolled
	}
	for _, w := range work {
		s.logf("round %d: %s: %s", round, name, w)
		cpu0, ok0 := svc.cpu()
		res, err := runWorkload(ctx, w, b)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("round %d, %s, %s: %w", round, name, w, err)
		}
		cpu1, ok1 := svc.cpu()
		if k := res.Requests + res.Errors; k > 0 && ok0 && ok1 {
			res.ServerCPUus = float64((cpu1 - cpu0).Microseconds()) / float64(k)
		}
		if w == "enroll" && res.Errors > 0 {
			return fmt.Errorf("round %d, %s: %d of %d POST /v1/nodes failed; logs in %s", round, name, res.Errors, n, s.dir)
		}
		s.logf("round %d: %s: %s", round, name, res)
		run.Results = append(run.Results, res)
		if p := svc.exited(); p != nil {
			return fmt.Errorf("round %d, %s: %s exited during %s: %v\n%s", round, name, p.name, w, p.err, p.tail(20))
		}
	}
	if t.after != nil {
		if err := t.after(b); err != nil {
			return fmt.Errorf("round %d, %s: %w", round, name, err)
		}
	}
	run.Memory = svc.memory()
	rep.Runs = append(rep.Runs, run)
	return nil
}

// figures collects, round by round, fig of workload w of target.
func figures(runs []TargetRun, target, w string, fig func(Result) float64) map[int]float64 {
	out := map[int]float64{}
	for _, r := range runs {
		if r.Target != target {
			continue
		}
		for _, x := range r.Results {
			if x.Workload == w || strings.HasPrefix(x.Workload, w+"-") {
				if v := fig(x); !math.IsNaN(v) {
					out[r.Round] = v
				}
			}
		}
	}
	return out
}

// values are m's figures, the rounds in order.
func values(m map[int]float64) []float64 {
	var v []float64
	for _, round := range slices.Sorted(maps.Keys(m)) {
		v = append(v, m[round])
	}
	return v
}

// ratios divides a by b round by round, for the rounds both have.
func ratios(a, b map[int]float64) []float64 {
	var v []float64
	for _, round := range slices.Sorted(maps.Keys(a)) {
		if y, ok := b[round]; ok && y > 0 {
			v = append(v, a[round]/y)
		}
	}
	return v
}

func rate(r Result) float64  { return r.Rate }
func p99(r Result) float64   { return r.P99ms }
func p50(r Result) float64   { return r.P50ms }
func cpuUS(r Result) float64 { return r.ServerCPUus }

// over5ms is NaN, which figures leaves out, when wrk did not report it.
func over5ms(r Result) float64 {
	if r.Over5msPct == nil {
		return math.NaN()
	}
	return *r.Over5msPct
}
func metIf(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// computeGoals fills the goals table from the runs (and the powersync
// result of the memory goal).
func computeGoals(rep GoalsReport) []Goal {
	var goals []Goal
	ironic := func(g Goal, w string, fig func(Result) float64, atLeast float64) Goal {
		dev := figures(rep.Runs, targetDev, w, fig)
		irn := figures(rep.Runs, targetIronic, w, fig)
		g.Figure, g.Baseline, g.Base = statOf(values(dev)), targetIronic, statOf(values(irn))
		g.Ratio = statOf(ratios(dev, irn))
		g.Met = "-"
		if g.Ratio != nil && atLeast > 0 {
			g.Met = metIf(g.Ratio.Median >= atLeast)
		} else if g.Ratio == nil {
			g.Note = "no Ironic figure in this run (--ironic)"
		}
		return g
	}
	goals = append(goals, ironic(Goal{Name: "GET /v1/nodes/{uuid}, wrk c16, rivet dev", Unit: "req/s", Target: "≥ 40× Ironic"}, "wrk-get", rate, 40))
	p := Goal{Name: "GET p99, wrk c16, rivet dev", Unit: "ms", Target: "< 5 ms", Baseline: targetIronic}
	p.Figure = statOf(values(figures(rep.Runs, targetDev, "wrk-get", p99)))
	p.Base = statOf(values(figures(rep.Runs, targetIronic, "wrk-get", p99)))
	p.Met = "-"
	if p.Figure != nil {
		p.Met = metIf(p.Figure.Median < 5)
	}
	if fl := statOf(values(figures(rep.Runs, targetFloor, "wrk-get", p99))); fl != nil {
		p.Note = fmt.Sprintf("machine floor (bare net/http, rivet dev's bytes, same wrk, same rounds): p99 %s ms", fl)
	}
	goals = append(goals, p)
	goals = append(goals, floorGoals(rep.Runs)...)
	goals = append(goals, ironic(Goal{Name: "GET /v1/nodes/detail?limit=100, wrk c16, rivet dev", Unit: "req/s", Target: "≥ 30× Ironic"}, "wrk-detail", rate, 30))
	// The servers' CPU per request: no target of its own, but the figure
	// a loaded machine moves least. The ratio is Ironic's over Rivet's.
	for _, w := range []string{"wrk-get", "wrk-detail"} {
		dev := figures(rep.Runs, targetDev, w, cpuUS)
		irn := figures(rep.Runs, targetIronic, w, cpuUS)
		g := Goal{Name: w + " server CPU per request (Ironic ÷ Rivet)", Unit: "µs/req", Figure: statOf(values(dev)),
			Baseline: targetIronic, Base: statOf(values(irn)), Ratio: statOf(ratios(irn, dev)), Target: "—", Met: "-"}
		goals = append(goals, g)
	}
	split := figures(rep.Runs, targetSplit, "enroll", rate)
	aio := figures(rep.Runs, targetAllInOne, "enroll", rate)
	e := Goal{Name: fmt.Sprintf("enroll %d nodes, c8, split ÷ all-in-one (PostgreSQL)", rep.EnrollNodes), Unit: "nodes/s",
		Figure: statOf(values(split)), Baseline: "all-in-one", Base: statOf(values(aio)), Ratio: statOf(ratios(split, aio)), Target: "≥ 0.8×", Met: "-"}
	if e.Ratio != nil {
		e.Met = metIf(e.Ratio.Median >= 0.8)
	}
	goals = append(goals, e)
	ec := Goal{Name: "enroll server CPU per node, split ÷ all-in-one", Unit: "µs/node",
		Figure:   statOf(values(figures(rep.Runs, targetSplit, "enroll", cpuUS))),
		Baseline: "all-in-one", Base: statOf(values(figures(rep.Runs, targetAllInOne, "enroll", cpuUS))),
		Ratio:  statOf(ratios(figures(rep.Runs, targetSplit, "enroll", cpuUS), figures(rep.Runs, targetAllInOne, "enroll", cpuUS))),
		Target: "—", Met: "-"}
	goals = append(goals, ec)
	if ps := rep.PowerSync; ps != nil {
		mib := float64(ps.Conductor.RSSKiB) / 1024
		goals = append(goals,
			Goal{Name: fmt.Sprintf("conductor RSS holding %d nodes (peak %.1f MiB)", ps.Nodes, float64(ps.Conductor.PeakKiB)/1024), Unit: "MiB",
				Figure: statOf([]float64{mib}), Target: "≤ 60 MiB", Met: metIf(mib <= 60)},
			Goal{Name: fmt.Sprintf("power sync of %d nodes, steady cycle ÷ bound", ps.Nodes), Unit: "×",
				Figure: statOf([]float64{ps.BoundRatio}), Target: "≤ 1.2×", Met: metIf(ps.BoundRatio > 0 && ps.BoundRatio <= 1.2),
				Note: fmt.Sprintf("cycle %.2f s, ideal N × latency / workers %.2f s (%.3f×)", ps.CycleS, ps.IdealS, ps.Ratio)})
	} else {
		goals = append(goals, Goal{Name: "conductor RSS at 100,000 nodes, power sync ≤ 1.2× bound", Target: "≤ 60 MiB, ≤ 1.2×", Met: "-",
			Note: "not run: --memory-goal"})
	}
	goals = append(goals, Goal{Name: "agent deploy, 1,000 concurrent on one conductor", Target: "reported", Met: "-",
		Note: "not run here: RIVET_AGENT_BENCH=1000 go test ./core/conductor -run TestAgentDeployScale (docs/performance.md, Agent deploys)"})
	return goals
}

// floorGoals are the rows comparing rivet dev's wrk-get with the machine
// floor's from the same rounds: what the machine costs any Go server at
// c16 against what Rivet adds. None when the floor was not measured.
func floorGoals(runs []TargetRun) []Goal {
	var out []Goal
	row := func(name, unit string, fig func(Result) float64) {
		dev := figures(runs, targetDev, "wrk-get", fig)
		fl := figures(runs, targetFloor, "wrk-get", fig)
		if len(fl) == 0 {
			return
		}
		out = append(out, Goal{Name: name, Unit: unit, Figure: statOf(values(dev)), Baseline: "machine floor",
			Base: statOf(values(fl)), Ratio: statOf(ratios(dev, fl)), Target: "—", Met: "-"})
	}
	row("GET vs machine floor: req/s, wrk c16 (rivet dev ÷ floor)", "req/s", rate)
	row("GET vs machine floor: p50", "ms", p50)
	row("GET vs machine floor: p99", "ms", p99)
	row("GET vs machine floor: requests over 5 ms", "% of req", over5ms)
	return out
}

func (st *Stat) String() string {
	if st == nil {
		return "-"
	}
	f := func(x float64) string {
		switch {
		case math.Abs(x) >= 100:
			return fmt.Sprintf("%.0f", x)
		case math.Abs(x) >= 10:
			return fmt.Sprintf("%.1f", x)
		default:
			return fmt.Sprintf("%.2f", x)
		}
	}
	if st.N == 1 {
		return f(st.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", f(st.Median), f(st.Min), f(st.Max))
}

// formatGoals renders the goals report as text: the runs, then the table.
func formatGoals(rep GoalsReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "machine: %s; %s, %d cores\ncommit: %s  date: %s  load (1/5/15 min): %s at start, %s at end\n",
		rep.Machine, rep.CPU, rep.Cores, rep.Commit, rep.Date, rep.LoadStart, rep.LoadEnd)
	fmt.Fprintf(&b, "%d rounds; reads on %d nodes, enroll comparison on %d nodes\n\n", rep.Rounds, rep.Nodes, rep.EnrollNodes)
	for _, r := range rep.Runs {
		fmt.Fprintf(&b, "round %d, %s (load %s, memory %s MiB):\n", r.Round, r.Target, r.Load, MiB(r.Memory.RSSKiB))
		for _, x := range r.Results {
			fmt.Fprintf(&b, "  %s\n", x)
		}
	}
	if rep.PowerSync != nil {
		fmt.Fprintf(&b, "%s\n", rep.PowerSync)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "goal\tunit\tRivet\tbaseline\tbaseline figure\tratio\ttarget\tmet\t")
	for _, g := range rep.Goals {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", g.Name, dash(g.Unit), g.Figure, dash(g.Baseline), g.Base, g.Ratio, g.Target, g.Met)
	}
	tw.Flush()
	b.WriteString("\nfigures: median (min–max) over the rounds; ratio taken round by round, then its median; " +
		"server CPU = user + system time of the target's processes and their children (Rivet dev and all-in-one: one process; " +
		"split: api + conductor; Ironic: api, its 2 workers and the conductor) per request.\n")
	for _, g := range rep.Goals {
		if g.Note != "" {
			fmt.Fprintf(&b, "%s: %s\n", g.Name, g.Note)
		}
	}
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// runGoals is the goals run of `bench suite --goals`.
func runGoals(ctx context.Context, o suiteOptions) (rep GoalsReport, err error) {
	model, cores := cpuInfo()
	rep = GoalsReport{Machine: machine(), CPU: model, Cores: cores, Commit: commit(ctx), Date: time.Now().UTC().Format(time.RFC3339),
		LoadStart: loadavg(), Rounds: o.rounds, Nodes: o.nodes, EnrollNodes: o.enrollNodes}
	defer func() {
		rep.LoadEnd = loadavg()
		rep.Goals = computeGoals(rep)
	}()
	if _, err := wrkBin(); err != nil {
		return rep, err
	}
	s, cleanup, err := newSuite(ctx, o)
	if err != nil {
		return rep, err
	}
	defer func() { cleanup(err) }()
	return rep, s.goalsRun(ctx, &rep)
}

// printGoals runs the goals and prints what was measured, even when the
// run failed part way.
func printGoals(ctx context.Context, o suiteOptions) int {
	rep, err := runGoals(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench suite --goals:", err)
	}
	if len(rep.Runs) > 0 || err == nil {
		if o.jsonOut {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(rep)
		} else {
			fmt.Print(formatGoals(rep))
		}
	}
	if err != nil {
		return 1
	}
	return 0
}

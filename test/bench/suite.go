package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// suiteOptions are the flags of `bench suite`.
type suiteOptions struct {
	scales         []int
	workloads      []string
	jsonOut        bool
	keepLogs       bool
	duration       time.Duration
	concurrency    int
	getConcurrency int
	powerNodes     int
	lifecycleNodes int
	psNodes        int
	psLatency      time.Duration
	psWorkers      []int
	psCycles       int
	// The goals run (goals.go).
	goals        bool
	rounds       int
	nodes        int
	enrollNodes  int
	ironic       bool
	ironicPython string
	memoryGoal   bool
	memoryNodes  int
	floor        bool
}

const suiteWorkloads = "enroll,get,list,detail,power,lifecycle,powersync"

// validWorkloads is every workload --workloads accepts.
const validWorkloads = suiteWorkloads + ",wrk-get,wrk-detail"

func parseSuiteFlags(args []string, stderr io.Writer) (suiteOptions, error) {
	var o suiteOptions
	fs := flag.NewFlagSet("bench suite", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scales := fs.String("scales", "1000,10000", "node counts, one deployment each")
	wl := fs.String("workloads", suiteWorkloads, "comma-separated workloads; enroll always runs when any other of the scale workloads does")
	psWorkers := fs.String("powersync-workers", "100", "[conductor] sync_power_state_workers of the powersync workload, comma-separated (one deployment each)")
	fs.BoolVar(&o.jsonOut, "json", false, "print the report as JSON")
	fs.BoolVar(&o.keepLogs, "keep-logs", false, "keep the services' logs and configs (their folder is printed)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "how long get, list and detail run")
	fs.IntVar(&o.concurrency, "concurrency", 8, "concurrency of enroll, power and lifecycle")
	fs.IntVar(&o.getConcurrency, "get-concurrency", 16, "concurrency of get and detail")
	fs.IntVar(&o.powerNodes, "power-nodes", 200, "nodes the power workload powers on")
	fs.IntVar(&o.lifecycleNodes, "lifecycle-nodes", 100, "nodes the lifecycle workload takes through manage, provide, deploy, undeploy")
	fs.IntVar(&o.psNodes, "powersync-nodes", 10000, "nodes of the powersync workload's conductor")
	fs.DurationVar(&o.psLatency, "powersync-latency", 100*time.Millisecond, "latency of each power-state probe (fake-hardware's fake_power_delay)")
	fs.IntVar(&o.psCycles, "powersync-cycles", 3, "steady power-sync cycles to measure")
	fs.BoolVar(&o.goals, "goals", false, "measure issue 32's goals side by side instead (rivet dev, split and all-in-one enroll, Ironic with --ironic) and print the goals table")
	fs.IntVar(&o.rounds, "rounds", 3, "goals: alternating rounds (rivet dev, Ironic, split/all-in-one enroll) the medians and ranges come from")
	fs.IntVar(&o.nodes, "nodes", 1000, "goals: nodes enrolled into rivet dev and Ironic before wrk-get and wrk-detail")
	fs.IntVar(&o.enrollNodes, "enroll-nodes", 5000, "goals: nodes of the split vs all-in-one enroll comparison")
	fs.BoolVar(&o.ironic, "ironic", false, "goals: also start Debian's Ironic 21.4 (python3-ironic) each round and measure it")
	fs.StringVar(&o.ironicPython, "ironic-python", "/usr/bin/python3", "goals: the Python that imports Debian's ironic")
	fs.BoolVar(&o.memoryGoal, "memory-goal", false, "goals: also run the powersync workload at --memory-nodes nodes (the conductor's memory and power sync goal; slow)")
	fs.IntVar(&o.memoryNodes, "memory-nodes", 100000, "goals: nodes of the --memory-goal conductor")
	fs.BoolVar(&o.floor, "floor", true, "goals: after rivet dev, measure the machine floor each round: wrk-get against a bare net/http server answering rivet dev's bytes from memory")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if o.scales, err = positiveInts("--scales", *scales); err != nil {
		return o, err
	}
	if o.psWorkers, err = positiveInts("--powersync-workers", *psWorkers); err != nil {
		return o, err
	}
	for _, w := range strings.Split(*wl, ",") {
		w = strings.TrimSpace(w)
		if _, ok := workloads[w]; !ok && w != "powersync" {
			return o, fmt.Errorf("--workloads: unknown workload %q (valid: %s)", w, validWorkloads)
		}
		o.workloads = append(o.workloads, w)
	}
	if o.psNodes < 1 || o.psLatency <= 0 || o.psCycles < 1 {
		return o, errors.New("--powersync-nodes, --powersync-latency and --powersync-cycles must be positive")
	}
	if o.rounds < 1 || o.nodes < 100 || o.enrollNodes < 1 || o.memoryNodes < 1 {
		return o, errors.New("--rounds, --enroll-nodes and --memory-nodes must be positive, --nodes at least 100 (wrk-detail reads pages of 100)")
	}
	if !o.goals {
		var goalsOnly []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "rounds", "nodes", "enroll-nodes", "ironic", "ironic-python", "memory-goal", "memory-nodes", "floor":
				goalsOnly = append(goalsOnly, "--"+f.Name)
			}
		})
		if len(goalsOnly) > 0 {
			return o, fmt.Errorf("%s only apply with --goals", strings.Join(goalsOnly, ", "))
		}
	}
	return o, nil
}

func positiveInts(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not a positive integer", flag, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// ScaleResult is one scale's figures.
type ScaleResult struct {
	Nodes int `json:"nodes"`
	// Enroll says how the nodes were enrolled ("api": POST /v1/nodes).
	Enroll    string   `json:"enroll"`
	Results   []Result `json:"results"`
	API       Memory   `json:"api_memory"`
	Conductor Memory   `json:"conductor_memory"`
	Plugins   Memory   `json:"plugin_memory"`
	// PluginProcs is how many plugin processes Plugins sums.
	PluginProcs int `json:"plugin_processes"`
}

// Report is what the suite prints.
type Report struct {
	Machine   string            `json:"machine"`
	Commit    string            `json:"commit"`
	Date      string            `json:"date"`
	LoadStart string            `json:"load_start"`
	LoadEnd   string            `json:"load_end"`
	Scales    []ScaleResult     `json:"scales"`
	PowerSync []PowerSyncResult `json:"powersync,omitempty"`
}

type suite struct {
	o   suiteOptions
	srv *server
	bin string
	dir string
	// live is every deployment up, and services every service of the
	// goals run, for the interrupt path.
	live     map[*deployment]bool
	services map[*service]bool
	log      io.Writer
}

func (s *suite) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "%s  %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (s *suite) down(d *deployment) {
	for _, err := range d.down() {
		s.logf("stopping: %v", err)
	}
	delete(s.live, d)
}

func (s *suite) benchOptions(url string, nodes int) options {
	return options{url: url, apiVersion: "1.26", nodes: nodes, concurrency: s.o.concurrency, getConcurrency: s.o.getConcurrency,
		duration: s.o.duration, powerNodes: s.o.powerNodes, lifecycleNodes: s.o.lifecycleNodes,
		template: `{"driver": "fake-hardware"}`, timeout: 10 * time.Minute, keep: true}
}

// runSuite is `bench suite`: it builds rivet, and for each scale brings
// up a deployment on a fresh database, runs the workloads and reads the
// services' memory; then the powersync workload.
func runSuite(args []string) int {
	o, err := parseSuiteFlags(args, os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "bench suite:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.goals {
		return printGoals(ctx, o)
	}
	rep, err := suiteRun(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench suite:", err)
	}
	if len(rep.Scales) > 0 || len(rep.PowerSync) > 0 {
		if o.jsonOut {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(rep)
		} else {
			fmt.Print(formatReport(rep))
		}
	}
	if err != nil {
		return 1
	}
	return 0
}

// newSuite builds rivet into a temporary folder and opens the PostgreSQL
// server; cleanup stops whatever is still up (an error, Ctrl-C), closes
// the server and removes the folder unless it is to be kept (err is the
// run's outcome).
func newSuite(ctx context.Context, o suiteOptions) (s *suite, cleanup func(err error), err error) {
	s = &suite{o: o, live: map[*deployment]bool{}, services: map[*service]bool{}, log: os.Stderr}
	if s.dir, err = os.MkdirTemp("", "rivet-bench-"); err != nil {
		return nil, nil, err
	}
	cleanup = func(err error) {
		for d := range s.live {
			s.down(d)
		}
		for svc := range s.services {
			for _, e := range svc.stop() {
				s.logf("stopping %s: %v", svc.name, e)
			}
			delete(s.services, svc)
		}
		if s.srv != nil {
			s.srv.db.Close()
		}
		if o.keepLogs || err != nil {
			s.logf("logs and configs kept in %s", s.dir)
			return
		}
		os.RemoveAll(s.dir)
	}
	if s.srv, err = openServer(ctx); err != nil {
		cleanup(err)
		return nil, nil, err
	}
	s.bin = s.dir + "/bin"
	s.logf("building rivet and rivet-driver-fake from the working tree")
	if err = build(ctx, s.bin); err != nil {
		cleanup(err)
		return nil, nil, err
	}
	return s, cleanup, nil
}

func suiteRun(ctx context.Context, o suiteOptions) (rep Report, err error) {
	rep = Report{Machine: machine(), Commit: commit(ctx), Date: time.Now().UTC().Format(time.RFC3339), LoadStart: loadavg()}
	defer func() { rep.LoadEnd = loadavg() }()
	s, cleanup, err := newSuite(ctx, o)
	if err != nil {
		return rep, err
	}
	defer func() { cleanup(err) }()
	var scaleWork, powersync []string
	for _, w := range o.workloads {
		if w == "powersync" {
			powersync = append(powersync, w)
		} else if w != "enroll" {
			scaleWork = append(scaleWork, w)
		}
	}
	if len(scaleWork) > 0 || contains(o.workloads, "enroll") {
		scaleWork = append([]string{"enroll"}, scaleWork...)
		for _, n := range o.scales {
			r, err := s.runScale(ctx, n, scaleWork)
			if r.Nodes > 0 {
				rep.Scales = append(rep.Scales, r)
			}
			if err != nil {
				return rep, fmt.Errorf("%d nodes: %w", n, err)
			}
		}
	}
	if len(powersync) > 0 {
		for _, w := range o.psWorkers {
			r, err := s.runPowerSync(ctx, w)
			if err != nil {
				return rep, fmt.Errorf("powersync, %d workers: %w", w, err)
			}
			s.logf("%s", r)
			rep.PowerSync = append(rep.PowerSync, r)
		}
	}
	return rep, nil
}

// runScale runs the workloads against a deployment holding n nodes.
func (s *suite) runScale(ctx context.Context, n int, work []string) (ScaleResult, error) {
	s.logf("%d nodes: starting a database, rivet api and rivet conductor", n)
	d, err := up(ctx, s.srv, s.bin, s.dir, deployConfig{})
	if err != nil {
		return ScaleResult{}, err
	}
	s.live[d] = true
	defer s.down(d)
	r := ScaleResult{Nodes: n, Enroll: "api"}
	o := s.benchOptions(d.apiURL, n)
	b := &bench{c: newClient(o), o: o}
	for _, w := range work {
		s.logf("%d nodes: %s", n, w)
		api0, apiOK := procCPU(d.api.pid())
		cond0, condOK := procCPU(d.cond.pid())
		res, err := runWorkload(ctx, w, b)
		if err == nil && ctx.Err() != nil {
			err = errors.New("interrupted")
		}
		if err != nil {
			return r, fmt.Errorf("%s: %w", w, err)
		}
		api1, apiOK2 := procCPU(d.api.pid())
		cond1, condOK2 := procCPU(d.cond.pid())
		if n := res.Requests + res.Errors; n > 0 && apiOK && apiOK2 && condOK && condOK2 {
			res.APICPUus = float64((api1 - api0).Microseconds()) / float64(n)
			res.ConductorCPUus = float64((cond1 - cond0).Microseconds()) / float64(n)
		}
		s.logf("%d nodes: %s", n, res)
		r.Results = append(r.Results, res)
		if d.api.exited() || d.cond.exited() {
			return r, fmt.Errorf("a service exited during %s\napi:\n%s\nconductor:\n%s", w, d.api.tail(20), d.cond.tail(20))
		}
	}
	r.API, r.Conductor, r.Plugins, r.PluginProcs, err = d.memory()
	return r, err
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// commit is the working tree's commit, "+dirty" when it has changes.
func commit(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += "+dirty"
	}
	return c
}

// loadavg is the 1, 5 and 15 minute load averages.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

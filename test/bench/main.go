package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"time"
)

type options struct {
	url            string
	apiVersion     string
	username       string
	password       string
	workloads      string
	nodes          int
	concurrency    int
	getConcurrency int
	duration       time.Duration
	powerNodes     int
	lifecycleNodes int
	template       string
	timeout        time.Duration
	keep           bool
	jsonOut        bool
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "suite" {
		os.Exit(runSuite(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "floor-serve" {
		os.Exit(floorServe(os.Args[2:]))
	}
	var o options
	flag.StringVar(&o.url, "url", envOr("RIVET_URL", "http://127.0.0.1:6385"), "API endpoint (with or without /v1)")
	flag.StringVar(&o.apiVersion, "api-version", "1.26", "microversion to send")
	flag.StringVar(&o.username, "username", os.Getenv("RIVET_USERNAME"), "http_basic user")
	flag.StringVar(&o.workloads, "workloads", "enroll,get,list,detail,power,lifecycle", "comma-separated workloads")
	flag.IntVar(&o.nodes, "nodes", 1000, "nodes enrolled by the enroll workload (list reads up to 1000 of them)")
	flag.IntVar(&o.concurrency, "concurrency", 8, "concurrency of enroll, power and lifecycle")
	flag.IntVar(&o.getConcurrency, "get-concurrency", 16, "concurrency of get and detail")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long get and detail run")
	flag.IntVar(&o.powerNodes, "power-nodes", 200, "nodes the power workload powers on")
	flag.IntVar(&o.lifecycleNodes, "lifecycle-nodes", 100, "nodes the lifecycle workload takes through manage, provide, deploy, undeploy")
	flag.StringVar(&o.template, "node-template", `{"driver": "fake-hardware"}`, "JSON body of each enrolled node (a name is added)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "bound of waiting workloads")
	flag.BoolVar(&o.keep, "keep", false, "keep the enrolled nodes")
	flag.BoolVar(&o.jsonOut, "json", false, "print results as JSON")
	flag.Parse()
	o.password = os.Getenv("RIVET_PASSWORD") // from the environment only: never on a command line

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	results, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if o.jsonOut {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"machine": machine(), "url": o.url, "results": results})
		return
	}
	fmt.Printf("machine: %s\n", machine())
	for _, r := range results {
		fmt.Println(r)
	}
}

func run(ctx context.Context, o options) ([]Result, error) {
	c := newClient(o)
	if err := c.ping(ctx); err != nil {
		return nil, err
	}
	b := &bench{c: c, o: o}
	defer func() {
		if !o.keep {
			b.cleanup(context.WithoutCancel(ctx))
		}
	}()
	var out []Result
	for _, w := range strings.Split(o.workloads, ",") {
		if _, ok := workloads[strings.TrimSpace(w)]; !ok {
			return out, fmt.Errorf("unknown workload %q (valid: enroll, get, list, detail, power, lifecycle, wrk-get, wrk-detail)", w)
		}
		r, err := runWorkload(ctx, strings.TrimSpace(w), b)
		if err != nil {
			return out, fmt.Errorf("%s: %w", w, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func machine() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s, %d cores, %s/%s", host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

var _ = http.MethodGet

package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Result is one workload's figures.
type Result struct {
	Workload    string  `json:"workload"`
	Requests    int     `json:"requests,omitempty"`
	Errors      int     `json:"errors"`
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate_per_s,omitempty"`
	P50ms       float64 `json:"p50_ms,omitempty"`
	P99ms       float64 `json:"p99_ms,omitempty"`
	ElapsedS    float64 `json:"elapsed_s"`
	Note        string  `json:"note,omitempty"`
	// ClientCPUus is the bench process's CPU time (user + system) during
	// the workload divided by its requests.
	ClientCPUus float64 `json:"client_cpu_us_per_req,omitempty"`
	// APICPUus and ConductorCPUus are the CPU time (user + system) of the
	// suite's rivet api and rivet conductor during the workload divided by
	// its requests: what a request costs the server, which moves far less
	// from run to run than the rates on a shared machine.
	APICPUus       float64 `json:"api_cpu_us_per_req,omitempty"`
	ConductorCPUus float64 `json:"conductor_cpu_us_per_req,omitempty"`
	// ServerCPUus is, in the goals run, the CPU time of all the target's
	// processes and their children (API, conductor, Ironic's API
	// workers, driver plugins) divided by the requests.
	ServerCPUus float64 `json:"server_cpu_us_per_req,omitempty"`
	// Over5msPct is, for wrk-get, the percentage of the requests that
	// took longer than 5 ms (wrk's histogram, by its done() hook); nil
	// when not measured. Compared with the machine floor's under the same
	// load, it says how much of the tail is the server's.
	Over5msPct *float64 `json:"over_5ms_pct,omitempty"`
}

func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s c=%-3d", r.Workload, r.Concurrency)
	if r.Requests > 0 {
		fmt.Fprintf(&b, " %7d req  %9.1f/s  p50 %7.2f ms  p99 %7.2f ms", r.Requests, r.Rate, r.P50ms, r.P99ms)
	}
	fmt.Fprintf(&b, "  elapsed %7.2f s  errors %d", r.ElapsedS, r.Errors)
	if r.ClientCPUus > 0 {
		fmt.Fprintf(&b, "  client cpu %.1f µs/req", r.ClientCPUus)
	}
	if r.APICPUus > 0 || r.ConductorCPUus > 0 {
		fmt.Fprintf(&b, "  api cpu %.1f µs/req  conductor cpu %.1f µs/req", r.APICPUus, r.ConductorCPUus)
	}
	if r.ServerCPUus > 0 {
		fmt.Fprintf(&b, "  server cpu %.1f µs/req", r.ServerCPUus)
	}
	if r.Over5msPct != nil {
		fmt.Fprintf(&b, "  over 5 ms %.2f%%", *r.Over5msPct)
	}
	if r.Note != "" {
		b.WriteString("  (" + r.Note + ")")
	}
	return b.String()
}

// latencies collects request durations from several workers.
type latencies struct{ d []time.Duration }

func (l *latencies) merge(o []time.Duration) { l.d = append(l.d, o...) }

func (l *latencies) result(name string, conc, errs int, elapsed time.Duration) Result {
	slices.Sort(l.d)
	r := Result{Workload: name, Requests: len(l.d), Errors: errs, Concurrency: conc, ElapsedS: elapsed.Seconds()}
	if len(l.d) > 0 {
		r.Rate = float64(len(l.d)) / elapsed.Seconds()
		r.P50ms = ms(l.d[len(l.d)/2])
		r.P99ms = ms(l.d[min(len(l.d)-1, len(l.d)*99/100)])
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

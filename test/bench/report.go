package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// find returns the result of the workload whose name is name or starts
// with name + "-" (list-1000, power-200, …).
func (r ScaleResult) find(name string) (Result, bool) {
	for _, x := range r.Results {
		if x.Workload == name || strings.HasPrefix(x.Workload, name+"-") {
			return x, true
		}
	}
	return Result{}, false
}

// formatReport renders the report as a table: one row per scale, then the
// power-sync figures.
func formatReport(rep Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "machine: %s\ncommit: %s  date: %s  load (1/5/15 min): %s at start, %s at end\n\n",
		rep.Machine, rep.Commit, rep.Date, rep.LoadStart, rep.LoadEnd)
	if len(rep.Scales) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "nodes\tenroll/s\tGET/s\tGET p50 ms\tGET p99 ms\tlist/s\tdetail/s\tpower s\tlifecycle s\tAPI MiB (peak)\tconductor MiB (peak)\tplugins MiB (peak)\terrors\t")
		for _, s := range rep.Scales {
			rate := func(w string) string {
				if x, ok := s.find(w); ok {
					return fmt.Sprintf("%.1f", x.Rate)
				}
				return "-"
			}
			elapsed := func(w string) string {
				if x, ok := s.find(w); ok {
					return fmt.Sprintf("%.2f", x.ElapsedS)
				}
				return "-"
			}
			p50, p99 := "-", "-"
			if g, ok := s.find("get"); ok {
				p50, p99 = fmt.Sprintf("%.2f", g.P50ms), fmt.Sprintf("%.2f", g.P99ms)
			}
			errs := 0
			for _, x := range s.Results {
				errs += x.Errors
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s (%s)\t%s (%s)\t%s (%s)\t%d\t\n", s.Nodes,
				rate("enroll"), rate("get"), p50, p99, rate("list"), rate("detail"), elapsed("power"), elapsed("lifecycle"),
				MiB(s.API.RSSKiB), MiB(s.API.PeakKiB), MiB(s.Conductor.RSSKiB), MiB(s.Conductor.PeakKiB),
				MiB(s.Plugins.RSSKiB), MiB(s.Plugins.PeakKiB), errs)
		}
		tw.Flush()
		b.WriteString("\nenroll through the REST API (POST /v1/nodes); list = GET /v1/nodes?limit=1000 (fewer nodes: all), " +
			"detail = GET /v1/nodes/detail?limit=100; power = 200 nodes API → power on reached; lifecycle = 100 nodes " +
			"manage → provide → deploy → undeploy; RSS = VmRSS (VmHWM) after the workloads.\n")
		for _, s := range rep.Scales {
			fmt.Fprintf(&b, "\n%d nodes:\n", s.Nodes)
			for _, x := range s.Results {
				fmt.Fprintf(&b, "  %s\n", x)
			}
			fmt.Fprintf(&b, "  %s\n", memoryLine(s.API, s.Conductor))
		}
	}
	if len(rep.PowerSync) > 0 {
		b.WriteString("\n")
		for _, p := range rep.PowerSync {
			fmt.Fprintf(&b, "%s\n", p)
		}
	}
	return b.String()
}

// memoryLine details the memory of the API and the conductor after the
// workloads, in MiB: each one's VmRSS split into anonymous and file-backed
// pages, its Pss, and the two together.
func memoryLine(api, cond Memory) string {
	one := func(m Memory) string {
		return fmt.Sprintf("rss %s (anon %s, file %s), pss %s", MiB(m.RSSKiB), MiB(m.AnonKiB), MiB(m.FileKiB), MiB(m.PssKiB))
	}
	both := api.Add(cond)
	return fmt.Sprintf("memory MiB: api %s; conductor %s; together rss %s, pss %s",
		one(api), one(cond), MiB(both.RSSKiB), MiB(both.PssKiB))
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"time"
)

// cycleMsg is the message the conductor logs after each power-state sync
// cycle (core/conductor/powersync Scheduler.Run), with the cycle's Stats
// as the "stats" group.
const cycleMsg = "power-state sync cycle done"

// Cycle is one power-state sync cycle, as the conductor logged it.
type Cycle struct {
	Duration time.Duration `json:"-"`
	Bound    time.Duration `json:"-"`
	// DurationS and BoundS are Duration and Bound in seconds.
	DurationS float64 `json:"duration_s"`
	BoundS    float64 `json:"bound_s"`
	Nodes     int     `json:"nodes"`
	Probed    int     `json:"probed"`
	Changed   int     `json:"changed"`
	Failed    int     `json:"failed"`
	Skipped   int     `json:"skipped"`
	Workers   int     `json:"workers"`
	Ratio     float64 `json:"ratio"`
}

// parseCycles picks the cycle lines out of a conductor's JSON log.
// Malformed lines and other messages are ignored.
func parseCycles(log string) []Cycle {
	var out []Cycle
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), cycleMsg) {
			continue
		}
		var rec struct {
			Msg   string `json:"msg"`
			Stats struct {
				Cycle
				Duration int64 `json:"duration"` // slog's JSON handler writes durations in ns
				Bound    int64 `json:"bound"`
			} `json:"stats"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Msg != cycleMsg {
			continue
		}
		c := rec.Stats.Cycle
		c.Duration, c.Bound = time.Duration(rec.Stats.Duration), time.Duration(rec.Stats.Bound)
		c.DurationS, c.BoundS = c.Duration.Seconds(), c.Bound.Seconds()
		out = append(out, c)
	}
	return out
}

// PowerSyncResult is the power-state sync of one conductor holding Nodes
// nodes whose every probe takes Latency, at Workers concurrency.
type PowerSyncResult struct {
	Nodes   int     `json:"nodes"`
	Workers int     `json:"workers"`
	Latency float64 `json:"latency_ms"`
	// IdealS is N × latency / concurrency, in seconds.
	IdealS float64 `json:"ideal_s"`
	// CycleS is the median steady cycle's duration, in seconds.
	CycleS float64 `json:"cycle_s"`
	// Ratio is CycleS / IdealS (target ≤ 1.2).
	Ratio float64 `json:"ratio"`
	// BoundRatio is the conductor's own figure: duration over the bound
	// computed from the probes' measured latencies.
	BoundRatio float64 `json:"bound_ratio"`
	Cycles     []Cycle `json:"cycles"`
	// Steady counts the cycles the figures come from: every node listed,
	// probed, and none changed (the first cycles record each node's power
	// state after power_state_sync_max_retries confirmations).
	Steady    int    `json:"steady"`
	Conductor Memory `json:"conductor_memory"`
	Plugins   Memory `json:"plugin_memory"`
}

func (r PowerSyncResult) String() string {
	return fmt.Sprintf("powersync  %d nodes × %.0f ms / %d workers: ideal %.2f s, cycle %.2f s (median of %d steady), ratio %.3f (vs measured latencies %.3f); conductor RSS %s MiB (peak %s), plugins %s MiB",
		r.Nodes, r.Latency, r.Workers, r.IdealS, r.CycleS, r.Steady, r.Ratio, r.BoundRatio, MiB(r.Conductor.RSSKiB), MiB(r.Conductor.PeakKiB), MiB(r.Plugins.RSSKiB))
}

// summarize computes the figures from the cycles logged so far; done
// reports whether want steady cycles were seen.
func summarize(cycles []Cycle, nodes, workers int, latency time.Duration, want int) (PowerSyncResult, bool) {
	r := PowerSyncResult{Nodes: nodes, Workers: workers, Latency: float64(latency) / float64(time.Millisecond), Cycles: cycles}
	r.IdealS = float64(nodes) * latency.Seconds() / float64(workers)
	var steady []Cycle
	for _, c := range cycles {
		if c.Nodes == nodes && c.Probed == nodes && c.Changed == 0 && c.Failed == 0 {
			steady = append(steady, c)
		}
	}
	r.Steady = len(steady)
	if len(steady) == 0 {
		return r, false
	}
	if len(steady) > want {
		steady = steady[:want]
	}
	ds := make([]float64, len(steady))
	rs := make([]float64, len(steady))
	for i, c := range steady {
		ds[i], rs[i] = c.Duration.Seconds(), c.Ratio
	}
	r.CycleS = median(ds)
	r.BoundRatio = median(rs)
	if r.IdealS > 0 {
		r.Ratio = math.Round(r.CycleS/r.IdealS*1000) / 1000
	}
	return r, len(steady) >= want
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	for i := 1; i < len(s); i++ { // insertion sort: a handful of cycles
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// syncInterval is the [conductor] sync_power_state_interval the powersync
// workload configures: the ideal cycle, at least 2 s, so cycles follow one
// another closely and the spread (half the interval) stays shorter than
// the cycle.
func syncInterval(nodes, workers int, latency time.Duration) time.Duration {
	ideal := time.Duration(float64(nodes) * float64(latency) / float64(workers))
	return max(ideal.Round(time.Second), 2*time.Second)
}

// runPowerSync runs the powersync workload: a deployment whose conductor
// syncs every node's power state at workers concurrency, each probe
// taking latency (fake-hardware's fake_power_delay), and waits for
// s.psCycles steady cycles.
func (s *suite) runPowerSync(ctx context.Context, workers int) (PowerSyncResult, error) {
	interval := syncInterval(s.o.psNodes, workers, s.o.psLatency)
	d, err := up(ctx, s.srv, s.bin, s.dir, deployConfig{syncInterval: interval, syncWorkers: workers})
	if err != nil {
		return PowerSyncResult{}, err
	}
	s.live[d] = true
	defer s.down(d)
	s.logf("powersync: %d nodes, %v per probe, %d workers, interval %v: enrolling", s.o.psNodes, s.o.psLatency, workers, interval)
	o := s.benchOptions(d.apiURL, s.o.psNodes)
	o.template = fmt.Sprintf(`{"driver": "fake-hardware", "driver_info": {"fake_power_delay": %s}}`, secondsOrEmpty(s.o.psLatency))
	b := &bench{c: newClient(o), o: o}
	if r, err := enroll(ctx, b); err != nil {
		return PowerSyncResult{}, fmt.Errorf("enroll: %w", err)
	} else if r.Errors > 0 {
		return PowerSyncResult{}, fmt.Errorf("enroll: %d of %d POST /v1/nodes failed; API log %s", r.Errors, s.o.psNodes, d.api.logPath)
	}
	ideal := time.Duration(float64(s.o.psNodes) * float64(s.o.psLatency) / float64(workers))
	// First cycles record power states (power_state_sync_max_retries + 1
	// cycles), then s.psCycles steady ones; allow each three times the ideal.
	limit := time.Duration(s.o.psCycles+6)*3*max(ideal, interval) + time.Minute
	deadline := time.Now().Add(limit)
	s.logf("powersync: waiting for %d steady cycles (ideal %v each; at most %v)", s.o.psCycles, ideal.Round(time.Millisecond), limit.Round(time.Second))
	for {
		log, _ := os.ReadFile(d.cond.logPath)
		r, done := summarize(parseCycles(string(log)), s.o.psNodes, workers, s.o.psLatency, s.o.psCycles)
		if done {
			_, r.Conductor, r.Plugins, _, _ = d.memory()
			return r, nil
		}
		if d.cond.exited() {
			return r, fmt.Errorf("conductor exited: %v\n%s", d.cond.err, d.cond.tail(30))
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("%d steady power-sync cycles not seen within %v (%d cycles logged, %d steady); conductor log %s", s.o.psCycles, limit, len(r.Cycles), r.Steady, d.cond.logPath)
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

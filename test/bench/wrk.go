package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The wrk workloads measure the reads with a client neither Rivet nor
// this bench wrote: wrk 4.1 (Debian's package `wrk`), 2 threads and
// --get-concurrency connections for --duration, its latency percentiles
// from --latency. wrk-get asks for nodes picked at random (each thread
// its own seed) among up to wrkGetNodes of the enrolled ones, wrk-detail
// for GET /v1/nodes/detail?limit=100. The bench's Go client stays for
// enroll and the waiting workloads.

// wrkThreads is wrk's -t: two threads, as issue 32's figures used.
const wrkThreads = 2

// wrkGetNodes bounds the uuids wrk-get picks from (each wrk thread holds
// their requests formatted).
const wrkGetNodes = 10000

// wrkTimeout is wrk's --timeout: an Ironic detail page under load takes
// seconds, past wrk's 2 s default, and a timed-out request is not counted
// in the latencies at all.
const wrkTimeout = "60s"

// wrkBin is the wrk executable (RIVET_BENCH_WRK overrides the PATH).
func wrkBin() (string, error) {
	if p := os.Getenv("RIVET_BENCH_WRK"); p != "" {
		return p, nil
	}
	p, err := exec.LookPath("wrk")
	if err != nil {
		return "", errors.New("wrk is not installed: the wrk workloads need wrk 4.1 (Debian/Ubuntu: apt-get install -y wrk), or RIVET_BENCH_WRK naming the binary")
	}
	return p, nil
}

// wrkGetScript is the Lua script of wrk-get: every request a GET of one of
// the uuids, formatted once per thread with the headers given by -H;
// setup numbers the threads so that each one seeds its own sequence; done
// prints the share of requests over 5 ms (wrkSlowScript).
func wrkGetScript(uuids []string) string {
	var b strings.Builder
	b.WriteString("local uuids = {\n")
	for _, u := range uuids {
		fmt.Fprintf(&b, "  %q,\n", u)
	}
	b.WriteString("}\n")
	b.WriteString(`local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end
local reqs = {}
function init(args)
  math.randomseed(os.time() * 1000 + id)
  for i, u in ipairs(uuids) do
    reqs[i] = wrk.format("GET", "/v1/nodes/" .. u)
  end
end
function request()
  return reqs[math.random(#reqs)]
end
`)
	b.WriteString(wrkSlowScript)
	return b.String()
}

// wrkSlowMarker starts the line wrkSlowScript prints.
const wrkSlowMarker = "Over 5ms:"

// wrkSlowScript is wrk's done hook printing the percentage of requests
// slower than 5 ms (5000 µs): wrk's Lua gives percentiles of its
// microsecond histogram, not counts, so it bisects for the largest
// percentile still within 5 ms.
const wrkSlowScript = `function done(summary, latency, requests)
  local lo, hi = 0, 100
  if latency.max <= 5000 then
    lo = 100
  elseif latency.min > 5000 then
    lo = 0
  else
    for _ = 1, 50 do
      local mid = (lo + hi) / 2
      if latency:percentile(mid) <= 5000 then lo = mid else hi = mid end
    end
  end
  io.write(string.format("` + wrkSlowMarker + ` %.4f%%\n", 100 - lo))
end
`

// wrkOutput is what the bench reads from wrk's report.
type wrkOutput struct {
	Requests int
	Duration time.Duration
	Rate     float64
	P50, P99 time.Duration
	// Non2xx counts responses outside 2xx and 3xx; SocketErrors the
	// connect, read, write errors and timeouts.
	Non2xx       int
	SocketErrors int
	// Over5msPct is the percentage of requests over 5 ms, when the
	// script printed it (wrkSlowScript); nil otherwise.
	Over5msPct *float64
}

// parseWrk reads wrk 4.1's report (run with --latency).
func parseWrk(out string) (wrkOutput, error) {
	var w wrkOutput
	var haveReq, haveRate, have50, have99 bool
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && (f[0] == "50%" || f[0] == "99%"):
			d, err := wrkDuration(f[1])
			if err != nil {
				return w, fmt.Errorf("wrk latency %q: %w", line, err)
			}
			if f[0] == "50%" {
				w.P50, have50 = d, true
			} else {
				w.P99, have99 = d, true
			}
		case len(f) >= 4 && f[1] == "requests" && f[2] == "in":
			n, err := strconv.Atoi(f[0])
			if err != nil {
				return w, fmt.Errorf("wrk %q: %w", line, err)
			}
			d, err := wrkDuration(strings.TrimSuffix(f[3], ","))
			if err != nil {
				return w, fmt.Errorf("wrk %q: %w", line, err)
			}
			w.Requests, w.Duration, haveReq = n, d, true
		case strings.HasPrefix(line, "Requests/sec:") && len(f) == 2:
			r, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return w, fmt.Errorf("wrk %q: %w", line, err)
			}
			w.Rate, haveRate = r, true
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:") && len(f) == 5:
			n, err := strconv.Atoi(f[4])
			if err != nil {
				return w, fmt.Errorf("wrk %q: %w", line, err)
			}
			w.Non2xx = n
		case strings.HasPrefix(line, wrkSlowMarker) && len(f) == 3:
			pct, err := strconv.ParseFloat(strings.TrimSuffix(f[2], "%"), 64)
			if err != nil || pct < 0 || pct > 100 {
				return w, fmt.Errorf("wrk %q: not a percentage", line)
			}
			w.Over5msPct = &pct
		case strings.HasPrefix(line, "Socket errors:"):
			// "Socket errors: connect 0, read 0, write 0, timeout 0"
			for i := 2; i+1 < len(f); i += 2 {
				n, err := strconv.Atoi(strings.TrimSuffix(f[i+1], ","))
				if err != nil {
					return w, fmt.Errorf("wrk %q: %w", line, err)
				}
				w.SocketErrors += n
			}
		}
	}
	if !haveReq || !haveRate || !have50 || !have99 {
		return w, fmt.Errorf("not a wrk --latency report (no requests, Requests/sec or 50%%/99%% lines):\n%.2000s", out)
	}
	return w, nil
}

// wrkDuration reads wrk's times: a number and us, ms, s, m or h.
func wrkDuration(s string) (time.Duration, error) {
	units := []struct {
		suffix string
		unit   time.Duration
	}{{"us", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(num, 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("bad time %q", s)
			}
			return time.Duration(v * float64(u.unit)), nil
		}
	}
	return 0, fmt.Errorf("bad time %q", s)
}

// runWrk runs wrk against path (or, with script, the requests it makes)
// and turns its report into a Result; ClientCPUus is wrk's own CPU.
func (b *bench) runWrk(ctx context.Context, name, path, script string) (Result, error) {
	bin, err := wrkBin()
	if err != nil {
		return Result{}, err
	}
	args := []string{"-t", strconv.Itoa(wrkThreads), "-c", strconv.Itoa(b.o.getConcurrency),
		"-d", fmt.Sprintf("%ds", max(1, int(b.o.duration.Round(time.Second).Seconds()))), "--latency", "--timeout", wrkTimeout}
	for k, vs := range b.c.getHeader {
		args = append(args, "-H", k+": "+vs[0])
	}
	if script != "" {
		dir, err := os.MkdirTemp("", "rivet-bench-wrk-")
		if err != nil {
			return Result{}, err
		}
		defer os.RemoveAll(dir)
		f := filepath.Join(dir, "get.lua")
		if err := os.WriteFile(f, []byte(script), 0o600); err != nil {
			return Result{}, err
		}
		args = append(args, "-s", f)
	}
	args = append(args, b.c.base+path)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Result{}, fmt.Errorf("wrk: %v\n%s%s", err, out, stderr.String())
	}
	w, err := parseWrk(string(out))
	if err != nil {
		return Result{}, err
	}
	r := Result{Workload: name, Requests: w.Requests - w.Non2xx, Errors: w.Non2xx + w.SocketErrors, Concurrency: b.o.getConcurrency,
		Rate: w.Rate, P50ms: ms(w.P50), P99ms: ms(w.P99), ElapsedS: w.Duration.Seconds(),
		Over5msPct: w.Over5msPct, Note: fmt.Sprintf("wrk -t%d -c%d", wrkThreads, b.o.getConcurrency)}
	if st := cmd.ProcessState; st != nil && w.Requests > 0 {
		r.ClientCPUus = float64((st.UserTime() + st.SystemTime()).Microseconds()) / float64(w.Requests)
	}
	if w.Non2xx > 0 {
		r.Rate = float64(r.Requests) / w.Duration.Seconds()
	}
	return r, nil
}

func wrkGet(ctx context.Context, b *bench) (Result, error) {
	if _, err := b.need(1); err != nil {
		return Result{}, err
	}
	b.mu.Lock()
	uuids := append([]string(nil), b.nodes...)
	b.mu.Unlock()
	if len(uuids) > wrkGetNodes {
		rand.Shuffle(len(uuids), func(i, j int) { uuids[i], uuids[j] = uuids[j], uuids[i] })
		uuids = uuids[:wrkGetNodes]
	}
	return b.runWrk(ctx, "wrk-get", "/v1/nodes/"+uuids[0], wrkGetScript(uuids))
}

func wrkDetail(ctx context.Context, b *bench) (Result, error) {
	if _, err := b.need(100); err != nil {
		return Result{}, err
	}
	return b.runWrk(ctx, "wrk-detail-100", "/v1/nodes/detail?limit=100", "")
}

package conductor

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/google/uuid"

	"github.com/rivetmetal/rivet/core/agenttoken"
	"github.com/rivetmetal/rivet/core/conductor/agentclient/agenttest"
	"github.com/rivetmetal/rivet/core/conductor/workers"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
	"github.com/rivetmetal/rivet/db/migrations"
	"github.com/rivetmetal/rivet/drivers/fake"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchDB opens the benchmark's database: SQLite, or PostgreSQL with
// RIVET_AGENT_BENCH_DB=postgres (RIVET_TEST_POSTGRES_DSN), with the
// production pool ([database] max_open_connections 20).
func benchDB(t testing.TB) *db.DB {
	t.Helper()
	dialect := db.SQLite
	if os.Getenv("RIVET_AGENT_BENCH_DB") == "postgres" {
		dialect = db.Postgres
	}
	dbh, err := db.Open(context.Background(), dbtest.Connection(t, dialect), db.Options{MaxOpenConnections: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dbh.Close() })
	m, err := migrations.NewMigrator(dbh)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return dbh
}

// TestAgentDeployScale drives RIVET_AGENT_BENCH (e.g. 1000) concurrent
// direct deploys on one conductor (in-process RPC; SQLite, or PostgreSQL
// with RIVET_AGENT_BENCH_DB=postgres), each node with its own fake agent
// (agenttest, a real HTTP server). The agents pace themselves as IPA
// does: a heartbeat as soon as the agent is up, then every second while
// the node waits (IPA's own interval is minutes; it heartbeats at once
// when a command ends, which the second-long interval stands for), and a
// refused heartbeat (the node busy) is retried after a growing, jittered
// pause, as IPA's heartbeat retries are; the deploy request is retried
// likewise on 409/503, as a client does. It reports deploys per minute and
// the process CPU per accepted heartbeat (the whole process's CPU, agents
// and deploy work included, so an upper bound; BenchmarkAgentHeartbeat
// measures one heartbeat alone). Skipped unless the variable is set: it is
// a benchmark.
func TestAgentDeployScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("RIVET_AGENT_BENCH"))
	if n <= 0 {
		t.Skip("set RIVET_AGENT_BENCH=N to run N concurrent agent deploys")
	}
	h := benchHarness(t, benchDB(t), func(c *Config) {
		c.Workers = workers.Config{Size: 64, ReservedForAPI: 8}
		c.LeaseDuration = 30 * time.Second
		c.LockRetryAttempts, c.LockRetryInterval = 0, 0
	})
	ctx := context.Background()
	nodes := make([]*objects.Node, n)
	for i := range nodes {
		nd := &objects.Node{UUID: uuid.NewString(), Driver: fake.HardwareType, ProvisionState: "available",
			DeployInterface: ptr("direct"),
			InstanceInfo:    map[string]any{"image_source": "http://images.test/disk.raw", "image_checksum": testSHA256}}
		if err := h.store.Create(ctx, nd); err != nil {
			t.Fatal(err)
		}
		nodes[i] = nd
	}
	var beats, refused atomic.Int64
	prof := startRoleProfile(t)
	cpu0, start := cpuTime(), time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, nd := range nodes {
		wg.Add(1)
		go pprof.Do(ctx, pprof.Labels("role", rolePoller), func(ctx context.Context) {
			defer wg.Done()
			errs <- deployOne(ctx, h, nd, &beats, &refused)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	t.Logf("%d concurrent agent deploys on one conductor (%s): %v wall, %.0f deploys/min; %d heartbeats accepted (%d refused: node busy); process CPU %v, %.2f ms per accepted heartbeat (upper bound: agents and deploy work included)",
		n, h.dbh.Dialect(), wall.Round(time.Millisecond), float64(n)/wall.Minutes(), beats.Load(), refused.Load(), cpu.Round(time.Millisecond),
		float64(cpu.Microseconds())/1000/float64(beats.Load()))
	if prof != nil {
		prof.report(t, n, beats.Load(), refused.Load())
	}
}

// The roles TestAgentDeployScale's CPU profile tells apart, as goroutine
// labels: goroutines a labelled one starts inherit its label, so the
// conductor's work started by a heartbeat (the follow-up, the deploy
// work it resumes) counts as the heartbeat's.
const (
	rolePoller    = "poller"    // the test watching each node's state
	roleAgent     = "agent"     // the fake agents' HTTP servers
	roleDeploy    = "deploy"    // do_node_deploy and the work it starts
	roleLookup    = "lookup"    // get_node_with_token
	roleHeartbeat = "heartbeat" // heartbeat and what it starts
)

// roleProfile is a CPU profile of the process by role.
type roleProfile struct{ buf bytes.Buffer }

// startRoleProfile starts profiling, or returns nil when the process is
// profiled already (go test -cpuprofile).
func startRoleProfile(t *testing.T) *roleProfile {
	p := &roleProfile{}
	if err := pprof.StartCPUProfile(&p.buf); err != nil {
		t.Logf("no CPU breakdown by role: %v", err)
		return nil
	}
	return p
}

// report stops the profile and logs the CPU each role took: the
// conductor's share of a heartbeat (the RPC, in process here, and the
// conductor's handling and follow-up; what the deploy does once resumed
// is counted apart), of a deploy request, and what the fake agents, the
// test's pollers and the rest (runtime, GC, the conductor's own loops)
// took. Sampled at 100 Hz: about 10 ms a sample.
func (p *roleProfile) report(t *testing.T, n int, beats, refused int64) {
	pprof.StopCPUProfile()
	prof, err := profile.Parse(&p.buf)
	if err != nil {
		t.Logf("no CPU breakdown by role: %v", err)
		return
	}
	cpuIndex := len(prof.SampleType) - 1
	by := map[string]time.Duration{}
	var total time.Duration
	for _, s := range prof.Sample {
		role := "other"
		if r := s.Label["role"]; len(r) > 0 {
			role = r[0]
		}
		if role == roleHeartbeat && resumesWork(s) {
			role = "resumed"
		}
		d := time.Duration(s.Value[cpuIndex])
		by[role] += d
		total += d
	}
	ms := func(d time.Duration, per int64) float64 {
		return float64(d.Microseconds()) / 1000 / float64(max(per, 1))
	}
	pct := func(d time.Duration) float64 { return 100 * float64(d) / float64(max(total, 1)) }
	t.Logf("CPU by role (profile, %v sampled): heartbeat %.2f ms per accepted heartbeat, %.2f ms per heartbeat request (%.1f%%); "+
		"deploy work resumed by heartbeats %.2f ms per deploy (%.1f%%); deploy requests and their work %.2f ms per deploy (%.1f%%); "+
		"token lookups %.1f%%; fake agents %.1f%%; pollers %.1f%%; runtime, GC and conductor loops %.1f%%",
		total.Round(time.Millisecond), ms(by[roleHeartbeat], beats), ms(by[roleHeartbeat], beats+refused), pct(by[roleHeartbeat]),
		ms(by["resumed"], int64(n)), pct(by["resumed"]), ms(by[roleDeploy], int64(n)), pct(by[roleDeploy]),
		pct(by[roleLookup]), pct(by[roleAgent]), pct(by[rolePoller]), pct(by["other"]))
}

// resumesWork reports whether s was taken in the deploy or clean work a
// heartbeat resumed rather than in the heartbeat's own handling.
func resumesWork(s *profile.Sample) bool {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			if name := line.Function.Name; strings.HasSuffix(name, ").continueDeploy") || strings.HasSuffix(name, ").continueClean") {
				return true
			}
		}
	}
	return false
}

// backoff is a retry pause: doubling from 50 ms to 2 s, with jitter, so
// a thousand clients do not retry in step.
type backoff struct{ d time.Duration }

func (b *backoff) wait() {
	if b.d == 0 {
		b.d = 50 * time.Millisecond
	}
	time.Sleep(b.d/2 + rand.N(b.d))
	b.d = min(2*b.d, 2*time.Second)
}

// deployOne deploys nd through its own fake agent. ctx carries the
// poller's profile label, which each call labelled otherwise restores.
func deployOne(ctx context.Context, h *harness, nd *objects.Node, beats, refused *atomic.Int64) error {
	a := agenttest.New()
	var url string
	pprof.Do(ctx, pprof.Labels("role", roleAgent), func(context.Context) { url = a.Start() })
	defer a.Close()
	as := func(role string, fn func() error) (err error) {
		pprof.Do(ctx, pprof.Labels("role", role), func(context.Context) { err = fn() })
		return err
	}
	var retry backoff
	for {
		err := as(roleDeploy, func() error { return h.api.DoNodeDeploy(ctx, nd, false, nil) })
		if err == nil {
			break
		}
		if class, code := classOf(err); class != "NodeLocked" && code != 503 {
			return fmt.Errorf("deploy %s: %w", nd.UUID, err)
		}
		retry.wait()
	}
	deadline := time.Now().Add(10 * time.Minute)
	lastState, since := "", time.Now()
	var nextBeat time.Time
	var beatRetry backoff
	for time.Now().Before(deadline) {
		cur, err := h.store.GetNode(ctx, nd.UUID)
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue // the database is busy
		}
		if cur.ProvisionState != lastState {
			lastState, since = cur.ProvisionState, time.Now()
		} else if time.Since(since) > 2*time.Minute {
			return fmt.Errorf("node %s stuck in %s for 2 minutes: reservation %v, last_error %v, token held by the agent %t",
				nd.UUID, cur.ProvisionState, deref(cur.Reservation), deref(cur.LastError), a.Token != "")
		}
		switch cur.ProvisionState {
		case "active":
			return nil
		case "deploy failed":
			return fmt.Errorf("node %s: %s", nd.UUID, deref(cur.LastError))
		case "wait call-back":
			if time.Now().Before(nextBeat) {
				break
			}
			if a.Token == "" {
				var got *objects.Node
				err := as(roleLookup, func() (err error) {
					got, err = h.api.GetNodeWithToken(ctx, cur)
					return err
				})
				if err != nil {
					beatRetry.wait()
					continue
				}
				a.Token = agenttoken.Stored(got.DriverInternalInfo)
				if a.Token == agenttoken.Masked {
					return fmt.Errorf("node %s: its token was issued to a lookup whose answer was lost", nd.UUID)
				}
			}
			if err := as(roleHeartbeat, func() error {
				return h.api.Heartbeat(ctx, cur, url, "9.14.1", agenttoken.Digest(a.Token))
			}); err != nil {
				refused.Add(1)
				beatRetry.wait()
				continue
			}
			beats.Add(1)
			beatRetry = backoff{}
			nextBeat = time.Now().Add(time.Second)
		}
		time.Sleep(150*time.Millisecond + rand.N(100*time.Millisecond))
	}
	return fmt.Errorf("node %s: no active within 10 minutes", nd.UUID)
}

// followingUp counts the nodes whose heartbeats are being followed up.
func (s *Service) followingUp() int {
	s.followUps.mu.Lock()
	defer s.followUps.mu.Unlock()
	return len(s.followUps.again)
}

// BenchmarkAgentHeartbeat measures one agent heartbeat of a node whose
// agent is writing the image (the steady state of a deploy): the RPC,
// reading the node, saving agent_url and agent_last_heartbeat, and the
// background check of the agent's command (an HTTP GET to the fake agent:
// still running), until the check ended. ns/op is wall time per
// heartbeat on an idle conductor; cpu-ns/op the process's CPU per
// heartbeat (the fake agent's share included).
//
//	go test ./core/conductor -run '^$' -bench AgentHeartbeat -benchmem
func BenchmarkAgentHeartbeat(b *testing.B) {
	h := benchHarness(b, nil, nil)
	ctx := context.Background()
	n := h.directNode("node-1", nil)
	if err := h.api.DoNodeDeploy(ctx, n, false, nil); err != nil {
		b.Fatal(err)
	}
	h.waitState(n.UUID, "wait call-back")
	a := agenttest.New()
	release := make(chan struct{})
	a.Handle("deploy.execute_deploy_step", func(ctx context.Context, _ map[string]any) (map[string]any, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, nil
	})
	defer close(release)
	beat := h.agentFor(n, a)
	idle := func() {
		for h.svc.pool.Stats().API > 0 || h.svc.followingUp() > 0 {
			time.Sleep(20 * time.Microsecond)
		}
	}
	// The first heartbeat starts write_image; from then on each finds it running.
	if err := beat(); err != nil {
		b.Fatal(err)
	}
	idle()
	if got := h.waitState(n.UUID, "wait call-back"); got.DriverInternalInfo[diiAgentCommand] == nil {
		b.Fatalf("write_image not running: %v", got.DriverInternalInfo)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		if err := beat(); err != nil {
			b.Fatal(err)
		}
		idle()
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	if got := h.node(n.UUID); got.ProvisionState != "wait call-back" || got.LastError != nil {
		b.Fatalf("node %s, %v", got.ProvisionState, deref(got.LastError))
	}
}

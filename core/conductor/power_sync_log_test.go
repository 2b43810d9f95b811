package conductor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/drivers/fake"
	"github.com/rivetmetal/rivet/plugins"
)

// getPowerFailing fails GetPowerState while fail is set.
type getPowerFailing struct {
	*hookedFake
	mu   sync.Mutex
	fail error
}

func (g *getPowerFailing) GetPowerState(ctx context.Context, n plugins.Node) (plugins.PowerState, error) {
	g.mu.Lock()
	fail := g.fail
	g.mu.Unlock()
	if fail != nil {
		return "", fail
	}
	return g.hookedFake.GetPowerState(ctx, n)
}

func (g *getPowerFailing) setFail(err error) {
	g.mu.Lock()
	g.fail = err
	g.mu.Unlock()
}

// logLines captures JSON log lines.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// take returns the lines whose msg starts with prefix and forgets them all.
func (l *logLines) take(prefix string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(l.buf.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && strings.HasPrefix(m["msg"].(string), prefix) {
			out = append(out, m)
		}
	}
	l.buf.Reset()
	return out
}

// Power sync logs one line per failing node, with its name and UUID: the
// first failure, then a reminder at most every failureLogEvery however
// many cycles fail, and one line when the BMC answers again.
func TestPowerSyncFailureLogLines(t *testing.T) {
	var drv *getPowerFailing
	h := startHarness(t, nil, "cond-a", func(c *Config) {
		c.PowerSyncMaxRetries = 1
		c.PowerSync.Spread, c.PowerSync.Breaker.Threshold = 0, 0 // every cycle probes the node at once
	}, func(hw *hookedFake) StaticDrivers {
		drv = &getPowerFailing{hookedFake: hw}
		return StaticDrivers{fake.HardwareType: drv}
	})
	out := &logLines{}
	now := time.Date(2027, 1, 17, 10, 0, 0, 0, time.UTC)
	fl := newFailureLog(slog.New(slog.NewJSONHandler(out, nil)))
	fl.now = func() time.Time { return now }
	h.svc.syncLog = fl
	n := h.enroll("rack3-node7")
	ctx := context.Background()
	cycle := func() {
		t.Helper()
		if _, err := h.svc.psync.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}

	drv.setFail(errors.New("BMC 192.0.2.9 answered 503"))
	cycle()
	lines := out.take("power sync:")
	if len(lines) != 1 || lines[0]["msg"] != "power sync: reading the power state failed" ||
		lines[0]["node"] != n.UUID || lines[0]["node_name"] != "rack3-node7" || lines[0]["level"] != "WARN" ||
		!strings.Contains(lines[0]["error"].(string), "answered 503") {
		t.Fatalf("first failure: %v", lines)
	}
	for range 3 {
		now = now.Add(time.Minute)
		cycle()
	}
	if lines := out.take("power sync:"); len(lines) != 0 {
		t.Fatalf("failures within %s of the first logged again: %v", failureLogEvery, lines)
	}
	now = now.Add(failureLogEvery)
	cycle()
	lines = out.take("power sync:")
	if len(lines) != 1 || lines[0]["msg"] != "power sync: reading the power state still fails" ||
		lines[0]["consecutive_failures"].(float64) < 5 || lines[0]["node_name"] != "rack3-node7" {
		t.Fatalf("reminder: %v", lines)
	}
	// The node is in maintenance (power failure) now and is still probed,
	// so the BMC's recovery is seen.
	drv.setFail(nil)
	cycle()
	lines = out.take("power sync:")
	if len(lines) != 1 || lines[0]["msg"] != "power sync: power state readable again" || lines[0]["level"] != "INFO" ||
		lines[0]["node"] != n.UUID || lines[0]["node_name"] != "rack3-node7" {
		t.Fatalf("recovery: %v", lines)
	}
	// A new failure after the recovery is a first failure again.
	drv.setFail(errors.New("timeout"))
	cycle()
	if lines := out.take("power sync:"); len(lines) != 1 || lines[0]["msg"] != "power sync: reading the power state failed" {
		t.Fatalf("failure after recovery: %v", lines)
	}
}

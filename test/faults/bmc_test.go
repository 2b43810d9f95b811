package faults

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// simulator is a running rivet-sim with its control endpoint.
type simulator struct {
	*proc
	url, control string
}

func startSim(t *testing.T, systems int) *simulator {
	t.Helper()
	p := startProc(t, "rivet-sim", nil, simBin, "--listen", "127.0.0.1:0", "--systems", fmt.Sprint(systems),
		"--control-listen", "127.0.0.1:0")
	s := &simulator{proc: p}
	waitUntil(t, 30*time.Second, "rivet-sim up", func() bool {
		p.running(t)
		out := p.log.String()
		s.url = regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(out)
		s.control = regexp.MustCompile(`http://127\.0\.0\.1:\d+/faults/`).FindString(out)
		return s.url != "" && s.control != ""
	})
	return s
}

// setFault sets (fault "") or clears a system's fault.
func (s *simulator) setFault(t *testing.T, system, fault string) {
	t.Helper()
	method := http.MethodPut
	if fault == "" {
		method = http.MethodDelete
	}
	req, _ := http.NewRequest(method, s.control+system, strings.NewReader(fault))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		t.Fatalf("%s fault %s %q: %d", method, system, fault, res.StatusCode)
	}
}

// requests returns how many requests the system's resources got so far.
func (s *simulator) requests(t *testing.T, system string) int64 {
	t.Helper()
	res, err := http.Get(s.control + system)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc struct {
		Requests int64 `json:"requests"`
	}
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc.Requests
}

// A BMC that hangs and one that answers 500 to everything, next to a
// healthy one, behind one conductor that syncs power every second: power
// actions on the broken ones fail with a last_error naming the BMC within
// a few [redfish] connection_timeouts; each BMC's circuit breaker opens
// after its threshold and the conductor stops calling it for the
// cooldown; the healthy node powers on and off meanwhile, and the
// conductor keeps serving.
func TestBMCHangsAnd500s(t *testing.T) {
	const connectionTimeout = time.Second
	sim := startSim(t, 3)
	aio := allInOne(t, filepath.Join(t.TempDir(), "rivet.db"), "",
		"RIVET_CONDUCTOR_ENABLED_HARDWARE_TYPES=redfish",
		"RIVET_CONDUCTOR_SYNC_POWER_STATE_INTERVAL=1",
		fmt.Sprintf("RIVET_REDFISH_CONNECTION_TIMEOUT=%g", connectionTimeout.Seconds()),
		"RIVET_REDFISH_POWER_STATE_CHANGE_TIMEOUT=20")
	api := aio.api
	names := []string{"hung", "failing", "healthy"} // node-0, node-1, node-2
	uuids := map[string]string{}
	for i, name := range names {
		n := api.createNode(t, "redfish", name, map[string]any{
			"redfish_address": sim.url, "redfish_system_id": fmt.Sprintf("/redfish/v1/Systems/node-%d", i),
			"redfish_username": "admin", "redfish_password": "password"})
		uuids[name] = n.UUID
	}
	for _, name := range names {
		api.waitNode(t, 60*time.Second, name, "power state synced", func(n node) bool { return n.power() == "power off" })
	}

	sim.setFault(t, "node-0", `{"hang":true}`)
	sim.setFault(t, "node-1", `{"status_500":true}`)
	asked := time.Now()
	for _, name := range names {
		api.setPower(t, name, "power on")
	}
	api.waitNode(t, 60*time.Second, "healthy", "powered on", func(n node) bool { return n.Reservation == nil && n.power() == "power on" })
	for _, name := range []string{"hung", "failing"} {
		n := api.waitNode(t, 60*time.Second, name, "power on failing", func(n node) bool { return n.Reservation == nil && n.lastError() != "" })
		took := time.Since(asked)
		t.Logf("%s: last_error after %v: %s", name, took.Round(10*time.Millisecond), n.lastError())
		if !strings.Contains(n.lastError(), strings.TrimPrefix(sim.url, "http://")) {
			t.Errorf("%s: last_error %q does not name the BMC", name, n.lastError())
		}
		if n.power() == "power on" {
			t.Errorf("%s: power state %q after a failed power on", name, n.power())
		}
		// A hung BMC costs one connection_timeout a request, not the
		// 10 s default: the [redfish] option reached the plugin.
		if name == "hung" && took > 8*connectionTimeout {
			t.Errorf("hung BMC: power on failed after %v, want a few connection_timeouts (%v)", took, connectionTimeout)
		}
	}

	// Power sync calls every node each second until the conductor's own
	// per-BMC breaker (power sync) skips the broken BMCs; from then on
	// nothing but an operator's action reaches them.
	for i, name := range []string{"hung", "failing"} {
		system := fmt.Sprintf("node-%d", i)
		waitUntil(t, 90*time.Second, name+": power sync skipping its BMC", func() bool {
			for line := range strings.Lines(aio.log.String()) {
				if strings.Contains(line, "circuit breaker open") && strings.Contains(line, uuids[name]) {
					return true
				}
			}
			return false
		})
		before := sim.requests(t, system)
		time.Sleep(5 * time.Second)
		if after := sim.requests(t, system); after-before > 1 {
			t.Errorf("%s: %d requests reached the BMC in the 5 s after power sync's breaker opened (sync every 1 s)", name, after-before)
		}
	}
	// Operators' actions go to the driver, whose breaker per BMC and
	// system opens after five failures in a row: then an action fails at
	// once with a last_error that says so, and the BMC sees no request.
	for i, name := range []string{"hung", "failing"} {
		system := fmt.Sprintf("node-%d", i)
		var n node
		for attempt := 1; ; attempt++ {
			if attempt > 8 {
				t.Fatalf("%s: the driver's breaker did not open after %d failed actions; last: %s", name, attempt-1, n.lastError())
			}
			before := sim.requests(t, system)
			api.setPower(t, name, "power on")
			n = api.waitNode(t, 30*time.Second, name, "the power action failing", func(n node) bool {
				return n.Reservation == nil && n.lastError() != ""
			})
			if strings.Contains(n.lastError(), "circuit breaker open") {
				if after := sim.requests(t, system); after != before {
					t.Errorf("%s: the breaker was open but %d requests reached the BMC", name, after-before)
				}
				t.Logf("%s, action %d: %s", name, attempt, n.lastError())
				break
			}
		}
	}

	// The healthy node was served all along, and still is.
	start := time.Now()
	api.setPower(t, "healthy", "power off")
	api.waitNode(t, 30*time.Second, "healthy", "powered off", func(n node) bool { return n.Reservation == nil && n.power() == "power off" })
	t.Logf("healthy node powered off in %v with two broken BMCs behind the same conductor", time.Since(start).Round(10*time.Millisecond))
	if n := api.node(t, "healthy"); n.lastError() != "" {
		t.Errorf("healthy node has last_error %q", n.lastError())
	}
	aio.running(t)
}

package sim

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrentClients: many clients mixing reads, resets, boot PATCHes and
// media changes on shared systems lose no update (run with -race).
func TestConcurrentClients(t *testing.T) {
	const systems, workers, ops = 4, 8, 30
	g := newRig(t, Options{Systems: systems})
	var resets [systems]atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for op := range ops {
				i := (w + op) % systems
				p := systemPath(i)
				switch op % 4 {
				case 0:
					if r := g.do(http.MethodPost, p+"/Actions/ComputerSystem.Reset", admin, map[string]string{"ResetType": "PushPowerButton"}); r.status == http.StatusNoContent {
						resets[i].Add(1)
					}
				case 1:
					g.do(http.MethodPatch, p, admin, map[string]any{"Boot": map[string]string{"BootSourceOverrideTarget": "Pxe"}})
				case 2:
					g.do(http.MethodPost, managerPath(i)+"/VirtualMedia/Floppy/Actions/VirtualMedia.InsertMedia", admin, map[string]string{"Image": isoURL})
					g.do(http.MethodPost, managerPath(i)+"/VirtualMedia/Floppy/Actions/VirtualMedia.EjectMedia", admin, nil)
				default:
					g.get(p)
				}
			}
		}()
	}
	wg.Wait()
	for i := range systems {
		st := g.state(SystemID(i))
		if int64(st.Resets) != resets[i].Load() {
			t.Errorf("%s: %d resets recorded, %d accepted", st.ID, st.Resets, resets[i].Load())
		}
		// PushPowerButton toggles: an odd count leaves it on.
		if want := map[bool]string{true: PowerOn, false: PowerOff}[st.Resets%2 == 1]; st.PowerState != want {
			t.Errorf("%s: %s after %d toggles", st.ID, st.PowerState, st.Resets)
		}
	}
}

// TestConcurrentLoginsRespectLimit: racing logins never exceed the limit.
func TestConcurrentLoginsRespectLimit(t *testing.T) {
	const limit, clients = 5, 20
	g := newRig(t, Options{SessionLimit: limit})
	var created, refused atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch r := g.login(DefaultUsername, DefaultPassword); r.status {
			case http.StatusCreated:
				created.Add(1)
			case http.StatusServiceUnavailable:
				refused.Add(1)
			default:
				panic(fmt.Sprintf("login status %d", r.status))
			}
		}()
	}
	wg.Wait()
	if created.Load() != limit || refused.Load() != clients-limit || g.sim.SessionCount() != limit {
		t.Errorf("created %d, refused %d, live %d; want %d, %d, %d",
			created.Load(), refused.Load(), g.sim.SessionCount(), limit, clients-limit, limit)
	}
}

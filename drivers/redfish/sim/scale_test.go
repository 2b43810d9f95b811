package sim

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// heapAfterGC is the live heap once garbage is collected.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestTenThousandSystems: one simulator with 10,000 systems stays within a
// small memory budget, because resources are rendered on demand.
func TestTenThousandSystems(t *testing.T) {
	const n, budget = 10_000, 16 << 20
	before := heapAfterGC()
	s, err := New(Options{Systems: n, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	for _, i := range []int{0, 1, n / 2, n - 1} {
		for _, p := range []string{systemPath(i), managerPath(i) + "/VirtualMedia/Cd", systemPath(i) + "/EthernetInterfaces/NIC1"} {
			if code := serve(h, http.MethodGet, p); code != http.StatusOK {
				t.Fatalf("GET %s: %d", p, code)
			}
		}
		if code := serve(h, http.MethodPost, systemPath(i)+"/Actions/ComputerSystem.Reset"); code != http.StatusNoContent {
			t.Fatalf("reset %d: %d", i, code)
		}
	}
	if code := serve(h, http.MethodGet, systemsPath); code != http.StatusOK {
		t.Fatalf("GET Systems: %d", code)
	}
	after := heapAfterGC()
	runtime.KeepAlive(s)
	used := after - min(before, after)
	t.Logf("%d systems: %.2f MiB live heap (%d bytes per system)", n, float64(used)/(1<<20), used/n)
	if used > budget {
		t.Errorf("%d systems use %d bytes, budget %d", n, used, budget)
	}
	if st, _ := s.System(SystemID(n - 1)); st.PowerState != PowerOn {
		t.Errorf("last system after Reset On: %+v", st)
	}
}

// serve runs one authenticated request in process; a POST resets to On.
func serve(h http.Handler, method, path string) int {
	body := ""
	if method == http.MethodPost {
		body = `{"ResetType":"On"}`
	}
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.SetBasicAuth(DefaultUsername, DefaultPassword)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// BenchmarkGetSystem measures rendering one ComputerSystem, in parallel
// across systems, without the network.
func BenchmarkGetSystem(b *testing.B) {
	s, err := New(Options{Systems: 1000})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if code := serve(h, http.MethodGet, "/redfish/v1/Systems/node-"+strconv.Itoa(i%1000)); code != http.StatusOK {
				b.Fatal(code)
			}
			i++
		}
	})
}

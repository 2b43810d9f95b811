package sim_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/rivetmetal/rivet/drivers/redfish/sim"
)

// Embed the simulator in a test: serve its handler, act on it over Redfish,
// make one BMC misbehave, and read the state back without HTTP.
func Example() {
	s, err := sim.New(sim.Options{Systems: 2, Seed: 1})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/redfish/v1/Systems/node-1/Actions/ComputerSystem.Reset",
		strings.NewReader(`{"ResetType":"On"}`))
	req.SetBasicAuth(sim.DefaultUsername, sim.DefaultPassword)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	res.Body.Close()

	_ = s.SetFault("node-0", sim.Fault{Status500: true})
	st, _ := s.System("node-1")
	fmt.Println(res.StatusCode, st.PowerState, st.Resets, st.LastBootSource)
	// Output: 204 On 1 Hdd
}

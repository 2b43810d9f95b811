package sim

import (
	"net/http"
	"strconv"
	"strings"
)

// managerFor resolves {mid} ("BMC-node-i") or answers 404.
func (s *Simulator) managerFor(w http.ResponseWriter, r *http.Request) (int, bool) {
	id, ok := strings.CutPrefix(r.PathValue("mid"), "BMC-")
	i, found := s.index(id)
	if !ok || !found {
		writeError(w, errNotFound(r.URL.Path))
		return 0, false
	}
	return i, true
}

func (s *Simulator) listManagers(w http.ResponseWriter, r *http.Request) {
	members := make([]string, len(s.systems))
	for i := range members {
		members[i] = managerPath(i)
	}
	writeJSON(w, http.StatusOK, collection(managersPath, "#ManagerCollection.ManagerCollection", "Manager Collection", members))
}

func (s *Simulator) getManager(w http.ResponseWriter, r *http.Request) {
	i, ok := s.managerFor(w, r)
	if !ok {
		return
	}
	p := managerPath(i)
	sys := &s.systems[i]
	sys.mu.Lock()
	fw := sys.bmcVersion()
	sys.mu.Unlock()
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":       p,
		"@odata.type":     "#Manager.v1_17_0.Manager",
		"Id":              ManagerID(i),
		"Name":            "Manager for node " + strconv.Itoa(i),
		"ManagerType":     "BMC",
		"Model":           "rivet-sim BMC",
		"FirmwareVersion": fw,
		"UUID":            uuidFrom(s.opts.Seed, i, uuidManager),
		"PowerState":      PowerOn,
		"Status":          statusOK(),
		"VirtualMedia":    link(p + "/VirtualMedia"),
		"Links": obj{
			"ManagerForServers": links(systemPath(i)),
			"ManagerForChassis": links(chassisOf(i)),
			"ManagerInChassis":  link(chassisOf(i)),
		},
	})
}

package api

import (
	"net/http"
	"slices"
)

// driverHosts maps each hardware type of the live conductors to the
// conductors that have it, hosts sorted.
func (s *server) driverHosts(r *http.Request) (map[string][]string, error) {
	cs, err := s.Conductors(r.Context())
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, c := range cs {
		for _, hw := range c.HardwareTypes {
			if !slices.Contains(out[hw], c.Hostname) {
				out[hw] = append(out[hw], c.Hostname)
			}
		}
	}
	for hw := range out {
		slices.Sort(out[hw])
	}
	return out, nil
}

// driverView is a driver as Ironic shows it up to 1.29 (no "type", which
// is 1.30); the properties link is 1.14.
func driverView(r *http.Request, name string, hosts []string) map[string]any {
	view := map[string]any{"name": name, "hosts": hosts, "links": resourceLinks(r, "drivers", name)}
	if VersionFrom(r.Context()).AtLeast(v1_14) {
		view["properties"] = resourceLinks(r, "drivers", name+"/properties")
	}
	return view
}

// listDrivers serves GET /v1/drivers from the live conductors' hardware
// types.
func (s *server) listDrivers(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if q.Has("type") || q.Has("detail") {
		return errNotAcceptable() // 1.30
	}
	hosts, err := s.driverHosts(r)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(hosts))
	for n := range hosts {
		names = append(names, n)
	}
	slices.Sort(names)
	items := make([]map[string]any, 0, len(names))
	for _, n := range names {
		items = append(items, driverView(r, n, hosts[n]))
	}
	writeJSON(w, http.StatusOK, map[string]any{"drivers": items})
	return nil
}

func errDriverNotFound(name string) error {
	return errorf(http.StatusNotFound, "Could not find the following driver(s) or hardware type(s): %s.", name)
}

// driverExists answers 404 for a hardware type no live conductor has.
func (s *server) driverExists(r *http.Request) (string, []string, error) {
	name := r.PathValue("driver")
	hosts, err := s.driverHosts(r)
	if err != nil {
		return "", nil, err
	}
	if _, ok := hosts[name]; !ok {
		return "", nil, errDriverNotFound(name)
	}
	return name, hosts[name], nil
}

// getDriver serves GET /v1/drivers/{driver}.
func (s *server) getDriver(w http.ResponseWriter, r *http.Request) error {
	name, hosts, err := s.driverExists(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, driverView(r, name, hosts))
	return nil
}

// getDriverProperties serves GET /v1/drivers/{driver}/properties.
func (s *server) getDriverProperties(w http.ResponseWriter, r *http.Request) error {
	name, _, err := s.driverExists(r)
	if err != nil {
		return err
	}
	props, err := s.Conductor.GetDriverProperties(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, props)
	return nil
}

// getDriverRAIDProperties serves .../raid/logical_disk_properties (1.12):
// Ironic's 404 for a hardware type without a RAID interface.
func (s *server) getDriverRAIDProperties(w http.ResponseWriter, r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_12) {
		return errNotAcceptable()
	}
	name, _, err := s.driverExists(r)
	if err != nil {
		return err
	}
	return unsupported(http.StatusNotFound, name, "raid")
}

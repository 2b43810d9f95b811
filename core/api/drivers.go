package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/rivetmetal/rivet/core/catalog"
)

// liveCatalog is the default catalog source: the hardware interface rows
// of the conductors the Conductors lister says are live.
func (s *server) liveCatalog(ctx context.Context) (*catalog.Catalog, error) {
	cs, err := s.Conductors(ctx)
	if err != nil {
		return nil, err
	}
	hosts := make([]string, len(cs))
	for i, c := range cs {
		hosts[i] = c.Hostname
	}
	rows, err := s.Store.DB().HardwareInterfaces(ctx, hosts)
	if err != nil {
		return nil, err
	}
	return catalog.FromRows(rows), nil
}

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

// driverView is a driver as Ironic shows it: "type" from 1.30 (every Rivet
// driver is a dynamic one, a hardware type), the properties link from 1.14,
// and with cat (detail) the default and enabled implementations of each
// interface of the catalog.
func driverView(r *http.Request, name string, hosts []string, cat *catalog.Catalog) map[string]any {
	v := VersionFrom(r.Context())
	view := map[string]any{"name": name, "hosts": hosts, "links": resourceLinks(r, "drivers", name)}
	if v.AtLeast(v1_14) {
		view["properties"] = resourceLinks(r, "drivers", name+"/properties")
	}
	if v.Less(v1_30) {
		return view
	}
	view["type"] = "dynamic"
	if cat == nil {
		return view
	}
	for _, iface := range catalog.Types() {
		if since, ok := driverInterfaceSince[iface]; ok && v.Less(since) {
			continue
		}
		im := cat.Impls(name, iface)
		var def any
		if im.Default != "" {
			def = im.Default
		}
		view["default_"+iface+"_interface"] = def
		if im.Enabled == nil {
			im.Enabled = []string{}
		}
		view["enabled_"+iface+"_interfaces"] = im.Enabled
	}
	return view
}

// listDrivers serves GET /v1/drivers from the live conductors' hardware
// types. From 1.30, ?type=dynamic|classic filters (Rivet has no classic
// drivers) and ?detail=true adds each interface's implementations.
func (s *server) listDrivers(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var detail bool
	fields := driverFieldsParam(r)
	if fields != nil && q.Has("detail") {
		if d, err := parseBool("detail", q.Get("detail")); err == nil && d {
			return errorf(http.StatusBadRequest, "Can not specify ?detail=True and fields in the same request.")
		}
	}
	if VersionFrom(r.Context()).Less(v1_30) {
		if q.Has("type") || q.Has("detail") {
			return errNotAcceptable()
		}
	}
	if fields != nil && VersionFrom(r.Context()).Less(v1_77) {
		return errNotAcceptable()
	}
	if VersionFrom(r.Context()).AtLeast(v1_30) {
		if t := q.Get("type"); q.Has("type") && t != "classic" && t != "dynamic" {
			return errorf(http.StatusBadRequest, `"type" filter must be one of "classic" or "dynamic", if specified.`)
		}
		if q.Has("detail") {
			var err error
			if detail, err = parseBool("detail", q.Get("detail")); err != nil {
				return err
			}
		}
	}
	hosts, err := s.driverHosts(r)
	if err != nil {
		return err
	}
	var cat *catalog.Catalog
	if detail {
		if cat, err = s.Catalog.Get(r.Context()); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(hosts))
	for n := range hosts {
		names = append(names, n)
	}
	slices.Sort(names)
	items := make([]map[string]any, 0, len(names))
	if q.Get("type") != "classic" {
		for _, n := range names {
			view, err := selectDriverFields(driverView(r, n, hosts[n], cat), fields)
			if err != nil {
				return err
			}
			items = append(items, view)
		}
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

// getDriver serves GET /v1/drivers/{driver}, in detail from 1.30.
func (s *server) getDriver(w http.ResponseWriter, r *http.Request) error {
	fields := driverFieldsParam(r)
	if fields != nil && VersionFrom(r.Context()).Less(v1_77) {
		return errNotAcceptable()
	}
	name, hosts, err := s.driverExists(r)
	if err != nil {
		return err
	}
	var cat *catalog.Catalog
	if VersionFrom(r.Context()).AtLeast(v1_30) {
		if cat, err = s.Catalog.Get(r.Context()); err != nil {
			return err
		}
	}
	view, err := selectDriverFields(driverView(r, name, hosts, cat), fields)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view)
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

package api

import (
	"net/http"
	"slices"
	"time"

	"github.com/rivetmetal/rivet/db"
)

// conductorFields are the fields of a conductor's view; a list shows
// conductorListFields unless ?detail=true or ?fields says otherwise.
var (
	conductorFields     = []string{"hostname", "conductor_group", "alive", "drivers", "created_at", "updated_at", "links"}
	conductorListFields = []string{"hostname", "conductor_group", "alive"}
)

// defaultHeartbeatTimeout is [conductor] heartbeat_timeout's default.
const defaultHeartbeatTimeout = 60 * time.Second

func errConductorNotFound(host string) error {
	return errorf(http.StatusNotFound, "Conductor %s could not be found.", host)
}

// msgVersionNotSupported is the message of Ironic's api_version check
// (ironic/api/validation) when no message is given.
const msgVersionNotSupported = "The API is not supported for this version"

// conductorsAllowed answers 404 below 1.49, as Ironic's api_version check.
func conductorsAllowed(r *http.Request) error {
	if VersionFrom(r.Context()).Less(v1_49) {
		return errorf(http.StatusNotFound, msgVersionNotSupported)
	}
	return nil
}

// conductorView is a registered conductor as Ironic shows it: alive when
// online and heartbeated within [conductor] heartbeat_timeout of now (the
// database's clock).
func (s *server) conductorView(r *http.Request, c *db.Conductor, now time.Time) map[string]any {
	timeout := s.HeartbeatTimeout
	if timeout <= 0 {
		timeout = defaultHeartbeatTimeout
	}
	drivers := []string(c.Drivers)
	if drivers == nil {
		drivers = []string{}
	}
	var updated *time.Time
	if !c.UpdatedAt.IsZero() {
		updated = &c.UpdatedAt.Time
	}
	alive := c.Online && updated != nil && !updated.Before(now.Add(-timeout))
	return map[string]any{
		"hostname": c.Hostname, "conductor_group": c.ConductorGroup, "drivers": drivers, "alive": alive,
		"created_at": isoTime(c.CreatedAt), "updated_at": isoTimePtr(updated),
		"links": resourceLinks(r, "conductors", c.Hostname),
	}
}

// listConductors serves GET /v1/conductors (1.49): every registered
// conductor, online or not, paged by hostname; ?detail=true or ?fields
// choose the fields (not both).
func (s *server) listConductors(w http.ResponseWriter, r *http.Request) error {
	if err := conductorsAllowed(r); err != nil {
		return err
	}
	fields, detail, err := parseFieldsDetail(r, conductorFields)
	if err != nil {
		return err
	}
	if fields == nil && !detail {
		fields = conductorListFields
	}
	pg, err := s.parseConductorPage(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	rows, err := s.Store.DB().ListConductors(ctx, db.ConductorPage{Limit: pg.limit, Marker: pg.marker, SortKey: pg.sortKey, Desc: pg.sortDir == "desc"})
	if isNotFound(err) {
		return errConductorNotFound(pg.marker)
	}
	if err != nil {
		return err
	}
	now, err := s.Store.DB().Now(ctx)
	if err != nil {
		return err
	}
	items, last := make([]map[string]any, 0, len(rows)), ""
	for i := range rows {
		items, last = append(items, selectFields(s.conductorView(r, &rows[i], now), fields)), rows[i].Hostname
	}
	writeCollection(w, "conductors", items, nextURL(r, pg, len(rows), last))
	return nil
}

// parseConductorPage is parsePage for conductors: the marker is a
// hostname; alive and drivers cannot be sorted on (Ironic's
// invalid_sort_key_list), nor can what is no column.
func (s *server) parseConductorPage(r *http.Request) (page, error) {
	q := r.URL.Query()
	key := q.Get("sort_key")
	if key == "alive" || key == "drivers" {
		return page{}, errorf(http.StatusBadRequest, "The sort_key value %s is an invalid field for sorting", key)
	}
	if key != "" && !slices.Contains(db.ConductorSortKeys, key) {
		return page{}, errorf(http.StatusBadRequest, "The sort_key value %q is an invalid field for sorting", key)
	}
	// parsePage checks limit and sort_dir; sort_key was checked above
	// against the conductors table, which has no object field table.
	stripped := *r
	u := *r.URL
	qq := u.Query()
	qq.Del("sort_key")
	u.RawQuery = qq.Encode()
	stripped.URL = &u
	pg, err := s.parsePage(&stripped, "Conductor")
	if key != "" {
		pg.sortKey = key
	}
	return pg, err
}

// getConductor serves GET /v1/conductors/{hostname} (1.49).
func (s *server) getConductor(w http.ResponseWriter, r *http.Request) error {
	if err := conductorsAllowed(r); err != nil {
		return err
	}
	fields, err := parseFields(r, conductorFields, nil)
	if err != nil {
		return err
	}
	host := r.PathValue("hostname")
	c, err := s.Store.DB().ConductorByHostname(r.Context(), host)
	if isNotFound(err) {
		return errConductorNotFound(host)
	}
	if err != nil {
		return err
	}
	now, err := s.Store.DB().Now(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, selectFields(s.conductorView(r, c, now), fields))
	return nil
}

// parseFieldsDetail reads ?fields (as parseFields) and ?detail (a
// boolean) of a collection that takes both; both at once is 400, as
// Ironic's get_request_return_fields.
func parseFieldsDetail(r *http.Request, all []string) ([]string, bool, error) {
	q := r.URL.Query()
	raw, hasDetail := q["detail"]
	detail := false
	if hasDetail {
		var err error
		if detail, err = parseBool("detail", raw[len(raw)-1]); err != nil {
			return nil, false, err
		}
		q.Del("detail")
	}
	stripped := *r
	u := *r.URL
	u.RawQuery = q.Encode()
	stripped.URL = &u
	fields, err := parseFields(&stripped, all, nil)
	if err != nil {
		return nil, false, err
	}
	if fields != nil && detail {
		return nil, false, errorf(http.StatusBadRequest, "Can not specify ?detail=True and fields in the same request.")
	}
	return fields, detail, nil
}

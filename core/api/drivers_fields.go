package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/version"
)

// v1_77 lets ?fields select the fields of /v1/drivers and
// /v1/drivers/{name} (Ironic's MINOR_77_DRIVER_FIELDS_SELECTOR).
var v1_77 = version.Version{Major: 1, Minor: 77}

// driverFieldsParam reads ?fields of a driver request as Ironic's
// args.string_list does (comma-separated, repeated parameters joined);
// nil when absent.
func driverFieldsParam(r *http.Request) []string {
	raw, ok := r.URL.Query()["fields"]
	if !ok {
		return nil
	}
	out := []string{}
	for _, item := range raw {
		for _, f := range strings.Split(item, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
	}
	return out
}

// selectDriverFields keeps the requested fields (and links) of a driver's
// view; a requested field the view lacks is 400, as Ironic's
// driver_sanitize (which checks after keeping: a detail field asked of a
// list without ?detail is not valid).
func selectDriverFields(view map[string]any, fields []string) (map[string]any, error) {
	if fields == nil {
		return view, nil
	}
	var invalid []string
	for _, f := range fields {
		if _, ok := view[f]; !ok && !slices.Contains(invalid, f) {
			invalid = append(invalid, f)
		}
	}
	if len(invalid) > 0 {
		slices.Sort(invalid)
		return nil, errorf(http.StatusBadRequest, "Field(s) \"%s\" are not valid", strings.Join(invalid, ", "))
	}
	return selectFields(view, fields), nil
}

package api

import (
	"net/http"
	"sort"
	"strings"
)

// parseListFields is parseFields for a list, which takes ?detail from
// 1.43 (Ironic's get_request_return_fields): below, any ?detail is 400;
// from 1.43 ?detail=True lists every field and cannot go with ?fields.
func parseListFields(r *http.Request, all []string, since gated) (fields []string, detail bool, err error) {
	q := r.URL.Query()
	if !q.Has("detail") {
		fields, err = parseFields(r, all, since)
		return fields, false, err
	}
	if detail, err = parseBool("detail", q.Get("detail")); err != nil {
		return nil, false, err
	}
	pyBool := "False"
	if detail {
		pyBool = "True"
	}
	if VersionFrom(r.Context()).Less(v1_43) {
		return nil, false, errorf(http.StatusBadRequest, "Invalid query parameter ?detail=%s received.", pyBool)
	}
	r2 := r.Clone(r.Context())
	q.Del("detail")
	r2.URL.RawQuery = q.Encode()
	if fields, err = parseFields(r2, all, since); err != nil {
		return nil, false, err
	}
	if fields != nil && detail {
		return nil, false, errorf(http.StatusBadRequest, "Can not specify ?detail=True and fields in the same request.")
	}
	return fields, detail, nil
}

// parseFields reads ?fields=a,b (1.8+; 406 below). A field newer than the
// request's version is 406 (Ironic's check_allowed_fields); a name the
// resource does not have is 400 with Ironic's message. A list's ?detail
// is 1.43, so any value is 400 here. nil means every field.
func parseFields(r *http.Request, all []string, since gated) ([]string, error) {
	if d, ok := r.URL.Query()["detail"]; ok {
		return nil, errorf(http.StatusBadRequest, "Invalid query parameter ?detail=%s received.", strings.Join(d, ","))
	}
	raw, ok := r.URL.Query()["fields"]
	if !ok {
		return nil, nil
	}
	if VersionFrom(r.Context()).Less(v1_8) {
		return nil, errNotAcceptable()
	}
	var fields, invalid []string
	for _, item := range raw {
		for _, f := range strings.Split(item, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			if s, ok := since[f]; ok && VersionFrom(r.Context()).Less(s) {
				return nil, errNotAcceptable()
			}
			if !contains(all, f) {
				invalid = append(invalid, f)
			}
			fields = append(fields, f)
		}
	}
	if len(invalid) > 0 {
		sort.Strings(invalid)
		return nil, errorf(http.StatusBadRequest, "Field(s) \"%s\" are not valid", strings.Join(invalid, ", "))
	}
	return fields, nil
}

// selectFields keeps fields (and links) of a view; nil fields keeps all.
func selectFields(view map[string]any, fields []string) map[string]any {
	if fields == nil {
		return view
	}
	out := map[string]any{}
	for _, f := range append(fields, "links") {
		if v, ok := view[f]; ok {
			out[f] = v
		}
	}
	return out
}

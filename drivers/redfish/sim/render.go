package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
)

// obj is a JSON object being rendered. encoding/json sorts map keys, so the
// output is stable without keeping rendered bytes around.
type obj = map[string]any

// maxBody bounds every request body; Redfish payloads here are tiny.
const maxBody = 64 << 10

func link(path string) obj { return obj{"@odata.id": path} }

func links(paths ...string) []obj {
	out := make([]obj, len(paths))
	for i, p := range paths {
		out[i] = link(p)
	}
	return out
}

// collection renders a Redfish collection of members.
func collection(odataID, odataType, name string, members []string) obj {
	return obj{
		"@odata.id":           odataID,
		"@odata.type":         odataType,
		"Name":                name,
		"Members@odata.count": len(members),
		"Members":             links(members...),
	}
}

func statusOK() obj { return obj{"State": "Enabled", "Health": "OK"} }

// writeJSON writes v with the headers every Redfish answer carries.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // only for a bug: every value rendered is plain data
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"code":"Base.1.8.GeneralError","message":"encoding the answer failed"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("OData-Version", "4.0")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeResource writes a resource that carries an ETag both in its body and
// in the ETag header, as gofish reads either.
func writeResource(w http.ResponseWriter, etag string, v obj) {
	v["@odata.etag"] = etag
	w.Header().Set("ETag", etag)
	writeJSON(w, http.StatusOK, v)
}

// readObject decodes a request body that must be one JSON object; keys keep
// their raw values so handlers can report unknown or mistyped properties.
func readObject(r *http.Request) (map[string]json.RawMessage, *apiError) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, errMalformed(err.Error())
	}
	if len(body) > maxBody {
		return nil, newError(http.StatusRequestEntityTooLarge, "GeneralError", "The request body is too large.")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, errMalformed(err.Error())
	}
	if m == nil {
		return nil, errMalformed("the body is not a JSON object")
	}
	return m, nil
}

// stringValue decodes a raw JSON value that must be a string (or null, which
// gives "" and true for isNull).
func stringValue(raw json.RawMessage) (v string, isNull bool, ok bool) {
	if strings.TrimSpace(string(raw)) == "null" {
		return "", true, true
	}
	err := json.Unmarshal(raw, &v)
	return v, false, err == nil
}

func boolValue(raw json.RawMessage) (v bool, ok bool) {
	return v, json.Unmarshal(raw, &v) == nil
}

// ifMatch reports whether the request's If-Match header admits current: an
// absent header, "*", or a list containing current.
func ifMatch(r *http.Request, current string) bool {
	h := r.Header.Values("If-Match")
	if len(h) == 0 {
		return true
	}
	for _, line := range h {
		for _, tag := range strings.Split(line, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || tag == current {
				return true
			}
		}
	}
	return false
}

// sortedKeys lists a body's properties in a stable order, so a request with
// several bad properties always gets the same answer.
func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// errEmptyJSON is the answer to a PATCH that names no property.
func errEmptyJSON() *apiError {
	return newError(http.StatusBadRequest, "EmptyJSON",
		"The request body submitted contained an empty JSON object and the service is unable to process it.")
}

// getSystemResource serves a GET of one of a system's resources: view
// renders it and its ETag under the system's lock.
func (s *Simulator) getSystemResource(w http.ResponseWriter, r *http.Request, view func(i int, sys *system) (obj, string)) {
	i, ok := s.systemFor(w, r)
	if !ok {
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	body, etag := view(i, sys)
	sys.mu.Unlock()
	writeResource(w, etag, body)
}

// systemRequest reads a request to one of a system's resources: the system
// the path names and a body that is one JSON object. On false the error
// has been written.
func (s *Simulator) systemRequest(w http.ResponseWriter, r *http.Request) (int, map[string]json.RawMessage, bool) {
	i, ok := s.systemFor(w, r)
	if !ok {
		return 0, nil, false
	}
	body, aerr := readObject(r)
	if aerr != nil {
		writeError(w, aerr)
		return 0, nil, false
	}
	return i, body, true
}

// patchTarget reads a PATCH of one of a system's resources: the system the
// path names and a body that is a JSON object naming at least one property.
// On false the error has been written.
func (s *Simulator) patchTarget(w http.ResponseWriter, r *http.Request) (int, map[string]json.RawMessage, bool) {
	i, body, ok := s.systemRequest(w, r)
	if !ok {
		return 0, nil, false
	}
	if len(body) == 0 {
		writeError(w, errEmptyJSON())
		return 0, nil, false
	}
	return i, body, true
}

// patchSystemResource serves a PATCH of one of a system's resources, under
// the system's lock: view renders the resource (its properties name the
// read-only ones), its ETag and its path; a stale If-Match is 412; take
// judges the body's properties (judgeProps); apply keeps what take
// collected once every property is valid; the answer is 204.
func (s *Simulator) patchSystemResource(w http.ResponseWriter, r *http.Request,
	view func(i int, sys *system) (current obj, etag, path string),
	take func(name string, raw json.RawMessage, errs []*apiError) ([]*apiError, bool),
	apply func(sys *system)) {
	i, body, ok := s.patchTarget(w, r)
	if !ok {
		return
	}
	sys := &s.systems[i]
	sys.mu.Lock()
	defer sys.mu.Unlock()
	current, etag, path := view(i, sys)
	if !ifMatch(r, etag) {
		writeError(w, errPrecondition(path))
		return
	}
	if errs := judgeProps(body, current, take); len(errs) > 0 {
		writeError(w, join(errs))
		return
	}
	apply(sys)
	w.WriteHeader(http.StatusNoContent)
}

// judgeProps goes over a PATCH body's properties in name order. take judges
// the ones it handles (appending its errors) and says whether it took the
// name; any other is refused as read-only when current shows it, else as
// unknown.
func judgeProps(body map[string]json.RawMessage, current obj,
	take func(name string, raw json.RawMessage, errs []*apiError) ([]*apiError, bool)) []*apiError {
	var errs []*apiError
	for _, name := range sortedKeys(body) {
		var taken bool
		if errs, taken = take(name, body[name], errs); taken {
			continue
		}
		if _, shown := current[name]; shown {
			errs = append(errs, errPropertyNotWritable(name))
		} else {
			errs = append(errs, errPropertyUnknown(name))
		}
	}
	return errs
}

package sim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzRequestBodies sends arbitrary bodies to every endpoint that parses
// one: no panic, only the statuses the endpoint documents, and every error
// in the Redfish shape.
func FuzzRequestBodies(f *testing.F) {
	for _, seed := range []string{
		`{"ResetType":"On"}`, `{"Boot":{"BootSourceOverrideTarget":"Pxe"}}`, `{"Image":"http://x/y.iso"}`,
		`{"UserName":"admin","Password":"password"}`, `{}`, `[]`, `null`, `{"Boot":null}`, `{"Image":null}`,
		`{"Inserted":false}`, `"x"`, `{"ResetType":["On"]}`, "",
	} {
		f.Add(seed)
	}
	s, err := New(Options{})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	targets := []struct{ method, path string }{
		{http.MethodPost, node0 + "/Actions/ComputerSystem.Reset"},
		{http.MethodPatch, node0},
		{http.MethodPost, cdPath + "/Actions/VirtualMedia.InsertMedia"},
		{http.MethodPost, cdPath + "/Actions/VirtualMedia.EjectMedia"},
		{http.MethodPatch, cdPath},
		{http.MethodPost, sessionsPath},
	}
	allowed := map[int]bool{200: true, 201: true, 204: true, 400: true, 401: true, 409: true, 413: true}
	f.Fuzz(func(t *testing.T, body string) {
		for _, tg := range targets {
			req := httptest.NewRequest(tg.method, tg.path, strings.NewReader(body))
			req.SetBasicAuth(DefaultUsername, DefaultPassword)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if !allowed[rec.Code] {
				t.Fatalf("%s %s %q: status %d", tg.method, tg.path, body, rec.Code)
			}
			if rec.Code >= 400 {
				var e struct {
					Error struct {
						Code string `json:"code"`
					} `json:"error"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" {
					t.Fatalf("%s %s %q: error body %s", tg.method, tg.path, body, rec.Body.Bytes())
				}
			}
		}
	})
}

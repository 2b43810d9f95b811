package redfish

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestResponseGuard: a successful GET must answer one JSON object, and no
// answer may exceed maxResponseBytes; everything else passes unchanged.
func TestResponseGuard(t *testing.T) {
	tests := map[string]struct {
		method, body string
		status       int
		wantErr      string
	}{
		"object":             {method: "GET", status: 200, body: `{"PowerState":"On"}`},
		"null":               {method: "GET", status: 200, body: `null`, wantErr: "is not a JSON object"},
		"array":              {method: "GET", status: 200, body: `[{}]`, wantErr: "is not a JSON object"},
		"truncated":          {method: "GET", status: 200, body: `{"a":`, wantErr: "is not a JSON object"},
		"empty":              {method: "GET", status: 200, body: ``, wantErr: "is not a JSON object"},
		"error status":       {method: "GET", status: 404, body: `not found`},
		"action, empty body": {method: "POST", status: 204, body: ``},
		"action, text body":  {method: "POST", status: 200, body: `OK`},
		"too large":          {method: "POST", status: 200, body: strings.Repeat("x", maxResponseBytes+1), wantErr: "larger than"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c := &http.Client{Transport: responseGuard{next: http.DefaultTransport}}
			req, _ := http.NewRequest(tc.method, srv.URL+"/redfish/v1/Systems/1", nil)
			resp, err := c.Do(req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "PowerState") {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status || string(got) != tc.body {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, got, tc.status, tc.body)
			}
		})
	}
}

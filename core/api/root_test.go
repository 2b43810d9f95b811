package api

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRootDocument(t *testing.T) {
	rg := fixed("1.1", "1.26")
	req := httptest.NewRequest(http.MethodGet, "http://rivet.example:6385/", nil)
	// Links name the address the connection reached, not the Host header.
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 6385}))
	req.Header.Set(HeaderVersion, "spam") // 21.4 ignores the header at /
	rec := httptest.NewRecorder()
	rg.RootHandler().ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Header().Get(HeaderMaxVersion) != "" {
		t.Fatalf("GET / = %d, headers %v", rec.Code, rec.Header())
	}
	var doc struct {
		Name    string     `json:"name"`
		Default versionDoc `json:"default_version"`
		Vs      []versionDoc
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Name != "OpenStack Ironic API" || doc.Default.Version != "1.26" || doc.Default.MinVersion != "1.1" ||
		doc.Default.Links[0].Href != "http://192.0.2.7:6385/v1/" {
		t.Fatalf("root doc %+v", doc)
	}
}

func TestV1DocumentGatesCollections(t *testing.T) {
	rg := fixed("1.1", "1.26")
	h := rg.Middleware(rg.V1Handler(gatedCollection{"portgroups", mv("1.23")}, gatedCollection{"lookup", mv("1.22")}))
	for hdr, want := range map[string]bool{"1.22": false, "1.23": true, "latest": true} {
		req := httptest.NewRequest(http.MethodGet, "/v1", nil)
		req.Header.Set(HeaderVersion, hdr)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var doc map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &doc)
		if _, ok := doc["portgroups"]; ok != want {
			t.Errorf("at %s portgroups listed = %v", hdr, ok)
		}
		if _, ok := doc["nodes"]; !ok {
			t.Errorf("at %s nodes missing", hdr)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1", nil))
	if rec.Code != 405 {
		t.Fatalf("POST /v1 = %d", rec.Code)
	}
}

package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// apiClient speaks Ironic's REST API to a rivet API process.
type apiClient struct {
	base       string
	user, pass string
	http       *http.Client
}

// requestTimeout bounds every request: an API that does not answer within
// it hangs, which no fault excuses.
const requestTimeout = 30 * time.Second

func newAPIClient(base string) *apiClient {
	return &apiClient{base: base, http: &http.Client{Timeout: requestTimeout}}
}

// reply is an API answer.
type reply struct {
	status int
	body   []byte
}

// fault returns the faultstring of Ironic's error body, or "" when the
// body is not one.
func (r reply) fault() string {
	var outer struct {
		ErrorMessage string `json:"error_message"`
	}
	if json.Unmarshal(r.body, &outer) != nil || outer.ErrorMessage == "" {
		return ""
	}
	var inner struct {
		FaultString string `json:"faultstring"`
	}
	if json.Unmarshal([]byte(outer.ErrorMessage), &inner) != nil {
		return ""
	}
	return inner.FaultString
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

// do sends one request at API 1.10: names exist, and new nodes start
// "available" (as before 1.11), so they need no manage and provide;
// a transport error is returned, not fatal, as faults cause them.
func (a *apiClient) do(method, path string, body any) (reply, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.10")
	if a.user != "" {
		req.SetBasicAuth(a.user, a.pass)
	}
	res, err := a.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return reply{status: res.StatusCode, body: b}, err
}

// must sends a request that has to answer want.
func (a *apiClient) must(t *testing.T, want int, method, path string, body any) reply {
	t.Helper()
	r, err := a.do(method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if r.status != want {
		t.Fatalf("%s %s: %s, want %d", method, path, r, want)
	}
	return r
}

// node is the part of a node the tests read.
type node struct {
	UUID           string  `json:"uuid"`
	Name           string  `json:"name"`
	PowerState     *string `json:"power_state"`
	ProvisionState string  `json:"provision_state"`
	LastError      *string `json:"last_error"`
	Reservation    *string `json:"reservation"`
}

func (n node) power() string {
	if n.PowerState == nil {
		return ""
	}
	return *n.PowerState
}

func (n node) lastError() string {
	if n.LastError == nil {
		return ""
	}
	return *n.LastError
}

// createNode enrolls a node and returns it.
func (a *apiClient) createNode(t *testing.T, driver, name string, driverInfo map[string]any) node {
	t.Helper()
	r := a.must(t, http.StatusCreated, http.MethodPost, "/v1/nodes",
		map[string]any{"driver": driver, "name": name, "driver_info": driverInfo})
	var n node
	if err := json.Unmarshal(r.body, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (a *apiClient) node(t *testing.T, ident string) node {
	t.Helper()
	r := a.must(t, http.StatusOK, http.MethodGet, "/v1/nodes/"+ident, nil)
	var n node
	if err := json.Unmarshal(r.body, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// setPower asks for a power state (202) and returns at once.
func (a *apiClient) setPower(t *testing.T, ident, target string) {
	t.Helper()
	a.must(t, http.StatusAccepted, http.MethodPut, "/v1/nodes/"+ident+"/states/power", map[string]any{"target": target})
}

// waitNode polls a node until cond holds and returns it.
func (a *apiClient) waitNode(t *testing.T, limit time.Duration, ident, what string, cond func(node) bool) node {
	t.Helper()
	var n node
	waitUntil(t, limit, ident+": "+what, func() bool {
		n = a.node(t, ident)
		return cond(n)
	})
	return n
}

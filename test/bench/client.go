package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// client sends JSON requests with the microversion header.
type client struct {
	base string
	o    options
	http *http.Client
	// lean, when not nil, serves the read workloads (newGetter) and
	// enroll (newLeanConn): the URL is plain http and --http-client is
	// not net/http.
	lean *leanTarget
}

func newClient(o options) *client {
	base := strings.TrimRight(o.url, "/")
	base = strings.TrimSuffix(base, "/v1")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	c := &client{base: base, o: o, http: &http.Client{Transport: tr, Timeout: requestTimeout}}
	if o.httpClient != httpClientNetHTTP {
		c.lean, _ = newLeanTarget(base, o) // not plain http: net/http serves everything
	}
	return c
}

// clientName names the HTTP client of enroll and the read workloads, for
// the report.
func (c *client) clientName() string {
	if c.lean != nil {
		return httpClientLean
	}
	return httpClientNetHTTP
}

// checkHTTPClient validates a --http-client value.
func checkHTTPClient(v string) error {
	if v != httpClientLean && v != httpClientNetHTTP {
		return fmt.Errorf("--http-client: %q is neither %s nor %s", v, httpClientLean, httpClientNetHTTP)
	}
	return nil
}

// do sends a request and decodes a JSON reply into out (when not nil). A
// status other than want is an error carrying the body.
// do sends one request and checks its status; out receives the JSON
// body decoded, or the body itself when out is a *[]byte.
func (c *client) do(ctx context.Context, method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", c.o.apiVersion)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.o.username != "" {
		req.SetBasicAuth(c.o.username, c.o.password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: HTTP %d (want %d): %.300s", method, path, resp.StatusCode, want, data)
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = data
		return nil
	}
	if out != nil && len(data) > 0 {
		return json.Unmarshal(data, out)
	}
	return nil
}

func (c *client) ping(ctx context.Context) error {
	if err := c.do(ctx, http.MethodGet, "/v1/", nil, http.StatusOK, nil); err != nil {
		return fmt.Errorf("cannot reach the API at %s: %w", c.base, err)
	}
	return nil
}

// node is the part of a node the workloads read.
type node struct {
	UUID           string  `json:"uuid"`
	PowerState     *string `json:"power_state"`
	ProvisionState *string `json:"provision_state"`
	LastError      *string `json:"last_error"`
}

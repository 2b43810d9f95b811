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
	// getHeader and postHeader are the headers of a getter's requests,
	// made once: what do sends.
	getHeader, postHeader http.Header
}

func newClient(o options) *client {
	base := strings.TrimRight(o.url, "/")
	base = strings.TrimSuffix(base, "/v1")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	// Rivet does not compress: asking for gzip only costs a header.
	tr.DisableCompression = true
	c := &client{base: base, o: o, http: &http.Client{Transport: tr, Timeout: requestTimeout}}
	c.getHeader = http.Header{
		"X-Openstack-Ironic-Api-Version": {o.apiVersion},
		"Accept":                         {"application/json"},
	}
	if o.username != "" {
		r := &http.Request{Header: c.getHeader}
		r.SetBasicAuth(o.username, o.password)
	}
	c.postHeader = c.getHeader.Clone()
	c.postHeader["Content-Type"] = []string{"application/json"}
	return c
}

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

package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/rivetmetal/rivet/core/version"
)

// HistoryVersion is the microversion of /v1/nodes/{node}/history.
var HistoryVersion = version.New(1, 78)

// NodeHistory lists the node's history entries in detail, oldest first,
// following the server's next links (API 1.78). The request goes out at
// 1.78 (or the version the caller gave, when that is newer) whatever the
// client negotiated for its other requests, which need no more than
// MaxVersion; a server that does not serve 1.78, or a version the caller
// gave below it, is a *FeatureVersionError.
func (c *Client) NodeHistory(ctx context.Context, node string) ([]Resource, error) {
	const feature = "node history"
	ver := HistoryVersion
	c.mu.Lock()
	req := c.st.req
	c.mu.Unlock()
	switch req.Kind {
	case Exact:
		if req.Version.Less(HistoryVersion) {
			return nil, &FeatureVersionError{Feature: feature, Needs: HistoryVersion, Served: req.Version, Endpoint: c.endpoint, UserGiven: true}
		}
		ver = req.Version
	}
	path := Nodes.itemPath(node, "history")
	query := url.Values{"detail": {"true"}}.Encode()
	var all []Resource
	seen := map[string]bool{}
	for page := 0; ; page++ {
		if page == maxPages || seen[query] {
			return nil, fmt.Errorf("node %s history: the server's next links loop (at %q)", node, query)
		}
		seen[query] = true
		resp, err := c.send(ctx, http.MethodGet, path+"?"+query, nil, ver.String())
		if err != nil {
			return nil, err
		}
		switch resp.status {
		case http.StatusOK:
		case http.StatusNotAcceptable:
			served, _ := version.Parse(resp.header.Get(HeaderMaxVersion))
			return nil, &FeatureVersionError{Feature: feature, Needs: HistoryVersion, Served: served,
				Endpoint: c.endpoint, Err: c.apiError(http.MethodGet, path, resp)}
		default:
			return nil, c.apiError(http.MethodGet, path, resp)
		}
		var raw struct {
			History json.RawMessage `json:"history"`
			Next    string          `json:"next"`
		}
		dec := json.NewDecoder(bytes.NewReader(resp.body))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("node %s history: decode answer: %w", node, err)
		}
		var items []Resource
		if len(raw.History) > 0 {
			if err := unmarshalNumbers(raw.History, &items); err != nil {
				return nil, fmt.Errorf("node %s history: %w", node, err)
			}
		}
		all = append(all, items...)
		if raw.Next == "" || len(items) == 0 {
			return all, nil
		}
		u, err := url.Parse(raw.Next)
		if err != nil {
			return nil, fmt.Errorf("node %s history: bad next link %q: %w", node, raw.Next, err)
		}
		query = u.RawQuery
	}
}

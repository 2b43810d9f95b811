package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// ListOptions select and shape a collection listing.
type ListOptions struct {
	// Detail asks for full objects (the /detail sub-collection).
	Detail bool
	// Fields asks for these fields only (API 1.8 and later).
	Fields []string
	// Limit caps the number of objects returned; 0 returns them all,
	// following the server's next links page by page.
	Limit int
	// SortKey and SortDir ("asc" or "desc") order the listing.
	SortKey, SortDir string
	// Filters are further query parameters (provision_state, driver,
	// maintenance, node, …).
	Filters url.Values
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	for k, vs := range o.Filters {
		q[k] = slices.Clone(vs)
	}
	if len(o.Fields) > 0 {
		q.Set("fields", strings.Join(o.Fields, ","))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.SortKey != "" {
		q.Set("sort_key", o.SortKey)
	}
	if o.SortDir != "" {
		q.Set("sort_dir", o.SortDir)
	}
	return q
}

// maxPages stops a server whose next links never end.
const maxPages = 10000

// List returns a collection, following `next` until the server stops
// sending one or Limit objects have arrived. Each next link's query is
// reused on the client's own endpoint: the server builds links from the
// host it saw, which behind a proxy is not the one the client used.
func (c *Client) List(ctx context.Context, k Kind, o ListOptions) ([]Resource, error) {
	path := "/" + k.Path
	if o.Detail {
		path += "/detail"
	}
	query := o.query().Encode()
	var all []Resource
	seen := map[string]bool{}
	for page := 0; ; page++ {
		if page == maxPages || seen[query] {
			return nil, fmt.Errorf("list %s: the server's next links loop (at %q)", k.Path, query)
		}
		seen[query] = true
		pq := path
		if query != "" {
			pq += "?" + query
		}
		var raw map[string]json.RawMessage
		if _, err := c.do(ctx, http.MethodGet, pq, nil, &raw, http.StatusOK); err != nil {
			return nil, err
		}
		var items []Resource
		if b, ok := raw[k.Key]; ok {
			if err := unmarshalNumbers(b, &items); err != nil {
				return nil, fmt.Errorf("list %s: %w", k.Path, err)
			}
		}
		all = append(all, items...)
		if o.Limit > 0 && len(all) >= o.Limit {
			return all[:o.Limit], nil
		}
		var next string
		if b, ok := raw["next"]; ok {
			_ = json.Unmarshal(b, &next)
		}
		if next == "" || len(items) == 0 {
			return all, nil
		}
		u, err := url.Parse(next)
		if err != nil {
			return nil, fmt.Errorf("list %s: bad next link %q: %w", k.Path, next, err)
		}
		query = u.RawQuery
	}
}

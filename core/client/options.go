package client

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultURL is the API address of `rivet dev` and of a default `rivet api`.
const DefaultURL = "http://127.0.0.1:6385"

// DefaultTimeout bounds one HTTP request (not a wait, which has its own).
const DefaultTimeout = 60 * time.Second

// Options configure a Client. The zero value talks to DefaultURL without
// credentials and negotiates the version without a persistent cache.
type Options struct {
	// URL is the API base, with or without the trailing /v1.
	URL string
	// Version is the microversion request; see ParseRequest.
	Version Request
	// Username and Password are http_basic credentials; none when empty.
	Username, Password string
	// Timeout bounds each HTTP request; DefaultTimeout when zero.
	Timeout time.Duration
	// HTTPClient overrides the transport (tests, TLS settings). Its Timeout
	// is left alone.
	HTTPClient *http.Client
	// Cache stores negotiated versions across clients; nil keeps them in
	// this Client only.
	Cache VersionCache
	// Logger receives one debug record per request (method, path, status,
	// version, request id); nil discards.
	Logger *slog.Logger
	// UserAgent is sent on every request; "rivet-client" when empty.
	UserAgent string
	// Retries is how many times a request the server asked to retry is
	// sent again: 503, or 409 for a locked node (python-ironicclient does
	// the same). Zero sends once.
	Retries int
	// RetryInterval is the pause between retries; DefaultRetryInterval
	// when zero.
	RetryInterval time.Duration
}

// DefaultRetryInterval is python-ironicclient's pause between retries.
const DefaultRetryInterval = 2 * time.Second

// Endpoint normalises a base URL to its /v1 endpoint without a trailing
// slash: "http://h:6385", "http://h:6385/" and "http://h:6385/v1/" all give
// "http://h:6385/v1". It is the version cache's key.
func Endpoint(raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		raw = DefaultURL
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("invalid API URL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("invalid API URL %q: want http:// or https://", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("invalid API URL %q: no host", raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("invalid API URL %q: give credentials with the username and password options, not in the URL", u.Redacted())
	}
	p := strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(p, "/v1") {
		p += "/v1"
	}
	u.Path, u.RawQuery, u.Fragment = p, "", ""
	return u.String(), nil
}

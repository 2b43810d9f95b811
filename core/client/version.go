package client

import (
	"fmt"
	"strings"

	"github.com/rivetmetal/rivet/core/version"
)

// Ironic's microversion headers (the same names as core/api's; redeclared
// so the client does not depend on the server package).
const (
	HeaderVersion    = "X-OpenStack-Ironic-API-Version"
	HeaderMinVersion = "X-OpenStack-Ironic-API-Minimum-Version"
	HeaderMaxVersion = "X-OpenStack-Ironic-API-Maximum-Version"
)

var (
	// MinVersion is the lowest microversion the client speaks: Ironic's
	// floor since Kilo, and what a server without microversions serves.
	MinVersion = version.New(1, 1)
	// MaxVersion is the highest microversion the client knows: the API of
	// Rivet release 0.2 (1.27 soft power and power timeouts, 1.28 node VIFs,
	// 1.29 inject NMI, 1.30 driver details, 1.31 node interfaces). Raise it
	// when the client learns newer fields or resources.
	MaxVersion = version.New(1, 31)
)

// RequestKind says where the version a client sends comes from.
type RequestKind int

const (
	// Negotiate means the caller gave no version: start at the highest the
	// client knows (or the cached one) and downgrade on a 406 (use case 7A).
	Negotiate RequestKind = iota
	// Exact is a version the caller gave; it is never changed (3B, 5–8).
	Exact
	// Latest sends "latest" as-is and reports what the server chose (9).
	Latest
)

// Request is the microversion a caller asked for.
type Request struct {
	Kind RequestKind
	// Version is the version asked for; zero unless Kind is Exact.
	Version version.Version
}

// String renders the request as a user would type it.
func (r Request) String() string {
	switch r.Kind {
	case Exact:
		return r.Version.String()
	case Latest:
		return "latest"
	}
	return "(negotiated)"
}

// ParseRequest validates a user-given API version: "" (negotiate),
// "latest" (any case) or MAJOR.MINOR with major 1. It runs before any
// request is made, so "spam", "l33t" or "1.2.3.4.5" never reach a server
// (use case 4). A minor above MaxVersion is allowed: the server decides,
// and unknown fields are kept as they come.
func ParseRequest(s string) (Request, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return Request{Kind: Negotiate}, nil
	case strings.EqualFold(s, "latest"):
		return Request{Kind: Latest}, nil
	}
	v, err := version.Parse(s)
	if err != nil {
		return Request{}, fmt.Errorf("invalid API version %q: want 1.N (this client knows %s to %s) or \"latest\"", s, MinVersion, MaxVersion)
	}
	if v.Major != 1 {
		return Request{}, fmt.Errorf("invalid API version %q: only major version 1 exists (this client knows %s to %s)", s, MinVersion, MaxVersion)
	}
	return Request{Kind: Exact, Version: v}, nil
}

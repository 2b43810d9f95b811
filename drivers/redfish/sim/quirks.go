package sim

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Quirks make the simulator behave as BMC families nobody here wrote do, so
// that a driver is tested against their habits and not only against our own
// reading of Redfish. The zero value has none.
type Quirks struct {
	// NoSessionService serves no SessionService: the service root links
	// neither it nor Links.Sessions, and logins answer 404. Only HTTP Basic
	// works (sushy-tools, some older BMCs).
	NoSessionService bool
	// PowerDelay applies a Reset this long after it was accepted; until
	// then PowerState still reads the old state, with no PoweringOn or
	// PoweringOff in between (sushy-tools applies power 1-11 s later).
	PowerDelay time.Duration
	// BootAlwaysContinuous turns every boot override into a persistent one:
	// Once is stored, reported and honoured as Continuous (sushy-tools with
	// libvirt).
	BootAlwaysContinuous bool
	// NoMediaActions advertises no InsertMedia/EjectMedia actions on
	// virtual media and answers them 404: media is changed by PATCH of
	// Image and Inserted (the DMTF mockups, older firmware).
	NoMediaActions bool
	// MissingCollections are System sub-collections ("Memory",
	// "Processors", "Storage", "SimpleStorage", "EthernetInterfaces") the
	// System still links but that answer 404, as a BMC with a broken or
	// unlicensed inventory module does.
	MissingCollections []string
	// SessionLimitConflict answers a login beyond SessionLimit with 409
	// SessionLimitExceeded instead of 503 (BMCs differ in the status).
	SessionLimitConflict bool
}

// collections are the System sub-collections MissingCollections may name.
var collections = []string{"Memory", "Processors", "Storage", "SimpleStorage", "EthernetInterfaces"}

func (q Quirks) validate() []error {
	var errs []error
	if q.PowerDelay < 0 {
		errs = append(errs, fmt.Errorf("power delay %v: must not be negative", q.PowerDelay))
	}
	for _, c := range q.MissingCollections {
		if !slices.Contains(collections, c) {
			errs = append(errs, fmt.Errorf("missing collection %q: want one of %s", c, strings.Join(collections, ", ")))
		}
	}
	return errs
}

// ParseQuirks reads a comma-separated list of quirk names, as rivet-sim's
// --quirks flag takes them: no-sessions, power-delay=DURATION,
// boot-continuous, no-media-actions, missing=COLLECTION (repeatable),
// session-limit-409.
func ParseQuirks(s string) (Quirks, error) {
	var q Quirks
	for _, f := range strings.Split(s, ",") {
		name, val, hasVal := strings.Cut(strings.TrimSpace(f), "=")
		switch {
		case name == "":
		case name == "no-sessions" && !hasVal:
			q.NoSessionService = true
		case name == "power-delay" && hasVal:
			d, err := time.ParseDuration(val)
			if err != nil || d < 0 {
				return Quirks{}, fmt.Errorf("quirk power-delay=%q: want a duration such as 2s", val)
			}
			q.PowerDelay = d
		case name == "boot-continuous" && !hasVal:
			q.BootAlwaysContinuous = true
		case name == "no-media-actions" && !hasVal:
			q.NoMediaActions = true
		case name == "missing" && hasVal:
			if !slices.Contains(collections, val) {
				return Quirks{}, fmt.Errorf("quirk missing=%q: want one of %s", val, strings.Join(collections, ", "))
			}
			q.MissingCollections = append(q.MissingCollections, val)
		case name == "session-limit-409" && !hasVal:
			q.SessionLimitConflict = true
		default:
			return Quirks{}, fmt.Errorf("unknown quirk %q: want no-sessions, power-delay=DURATION, boot-continuous, no-media-actions, missing=COLLECTION or session-limit-409", f)
		}
	}
	return q, nil
}

// withQuirks answers what a quirk takes away with a 404, before auth, as a
// BMC without the resource does.
func (s *Simulator) withQuirks(next http.Handler) http.Handler {
	q := s.opts.Quirks
	if !q.NoSessionService && !q.NoMediaActions && len(q.MissingCollections) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		gone := q.NoSessionService && strings.HasPrefix(p, sessionServicePath) ||
			q.NoMediaActions && strings.Contains(p, "/VirtualMedia/") && strings.Contains(p, "/Actions/")
		if rest, ok := strings.CutPrefix(p, systemsPath+"/"); ok && !gone {
			parts := strings.Split(rest, "/")
			gone = len(parts) > 1 && slices.Contains(q.MissingCollections, parts[1])
		}
		if gone {
			writeError(w, errNotFound(p))
			return
		}
		next.ServeHTTP(w, r)
	})
}

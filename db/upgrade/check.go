package upgrade

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbsync"
	"github.com/rivetmetal/rivet/db/onlinemigrations"
)

// Code is a check's outcome; its value is the exit code it calls for.
type Code int

// Check outcomes, as ironic-status upgrade check.
const (
	Success Code = 0
	Warning Code = 1
	Failure Code = 2
)

func (c Code) String() string {
	return [...]string{"Success", "Warning", "Failure"}[c]
}

// MarshalText implements encoding.TextMarshaler.
func (c Code) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Result is one check's outcome.
type Result struct {
	Check   string `json:"check"`
	Code    Code   `json:"result"`
	Details string `json:"details,omitempty"`
}

// Worst returns the most severe outcome of rs (Success for none).
func Worst(rs []Result) Code {
	w := Success
	for _, r := range rs {
		w = max(w, r.Code)
	}
	return w
}

// Check runs every check against the deployment.
func Check(ctx context.Context, d *db.DB, table *release.Table, reg *onlinemigrations.Registry, timeout time.Duration) ([]Result, error) {
	st, err := Collect(ctx, d, table, reg, timeout)
	if err != nil {
		return nil, err
	}
	rs := []Result{checkSchema(st)}
	if len(st.Schema.Applied) == 0 {
		return rs, nil
	}
	objs, err := checkObjects(ctx, d, table)
	if err != nil {
		return nil, err
	}
	rs = append(rs, objs, checkServices(st, table), checkPins(st, table), checkFinalized(st, table), checkMigrations(st))
	return rs, nil
}

func checkSchema(st *Status) Result {
	r := Result{Check: "Database schema"}
	switch {
	case len(st.Schema.Applied) == 0:
		r.Code, r.Details = Failure, "The database has no schema. Run `rivet dbsync create-schema`."
	case len(st.Schema.Pending) > 0:
		r.Code, r.Details = Failure, fmt.Sprintf("%d schema migration(s) of release %s are not applied (%s). Run `rivet dbsync upgrade` before starting services of this release.",
			len(st.Schema.Pending), st.Release, strings.Join(st.Schema.Pending, ", "))
	case len(st.Schema.Unknown) > 0:
		r.Code, r.Details = Warning, fmt.Sprintf("The schema has migrations of a newer release (%s); this binary can run against it, but upgrade it soon.", strings.Join(st.Schema.Unknown, ", "))
	}
	return r
}

func checkObjects(ctx context.Context, d *db.DB, table *release.Table) (Result, error) {
	r := Result{Check: "Object versions"}
	err := dbsync.CheckObjectVersions(ctx, d, table, false)
	var inc *dbsync.IncompatibleError
	switch {
	case errors.As(err, &inc):
		r.Code, r.Details = Failure, inc.Error()
	case err != nil:
		return r, err
	}
	return r, nil
}

// checkServices fails when a live service speaks nothing this release
// knows, and warns while live services run different service versions.
func checkServices(st *Status, table *release.Table) Result {
	r := Result{Check: "Service versions"}
	byVersion := map[int][]string{}
	var unknown []string
	for _, s := range st.Services {
		if !s.Live {
			continue
		}
		byVersion[s.ServiceVersion] = append(byVersion[s.ServiceVersion], s.Name()+" ("+s.Release+")")
		if s.Speaks == "" {
			unknown = append(unknown, s.Name())
		}
	}
	switch {
	case len(unknown) > 0:
		r.Code, r.Details = Failure, fmt.Sprintf("%s run a release older than any this release supports; upgrade them one release at a time.", strings.Join(unknown, ", "))
	case len(byVersion) > 1:
		var parts []string
		versions := make([]int, 0, len(byVersion))
		for v := range byVersion {
			versions = append(versions, v)
		}
		sort.Ints(versions)
		for _, v := range versions {
			parts = append(parts, fmt.Sprintf("service version %d: %s", v, strings.Join(byVersion[v], ", ")))
		}
		r.Code, r.Details = Warning, "A rolling upgrade is in progress: "+strings.Join(parts, "; ")+". Keep pin_release_version set (or auto) until every service runs the new release."
	}
	return r
}

// checkPins fails when a live API's pin asks for more than a live
// conductor stores (the order of seed 000 step 3 broken: the API serves
// only what the conductor stores until it is unpinned), and warns when
// every live service runs HEAD but some still pin an older release: the
// upgrade is done, the pin only hides new features.
func checkPins(st *Status, table *release.Table) Result {
	r := Result{Check: "Release pins"}
	var live []db.Service
	var versions []int
	for _, s := range st.Services {
		if s.Live {
			live, versions = append(live, s.Service), append(versions, s.ServiceVersion)
		}
	}
	if c, at, ok := conductorFloor(table, live, versions); ok {
		var ahead []string
		for _, s := range live {
			if e := table.PeerEffective(peerOf(s), versions); s.Binary == db.BinaryAPI && !at.Covers(e) {
				ahead = append(ahead, fmt.Sprintf("%s (%s)", s.Name(), describePin(s.Pin)))
			}
		}
		if len(ahead) > 0 {
			r.Code, r.Details = Failure, fmt.Sprintf("%s %s a newer release than %s (%s) stores, release %s: "+
				"an API serves only what that conductor stores (API %s) until it is unpinned. Conductors are unpinned first, then APIs: "+
				"clear pin_release_version on the conductors and send them SIGHUP, then on the APIs.",
				strings.Join(ahead, ", "), verb(len(ahead), "asks for", "ask for"), c.Name(), describePin(c.Pin), at.Label(), at.API)
			return r
		}
	}
	head := table.Head().ServiceVersion
	var pinned []string
	for _, s := range st.Services {
		if !s.Live {
			continue
		}
		if s.ServiceVersion < head {
			return r // upgrade still in progress: pins are expected
		}
		if s.Pin != nil && *s.Pin != "" && !strings.EqualFold(*s.Pin, "auto") {
			pinned = append(pinned, fmt.Sprintf("%s (pin %s)", s.Name(), *s.Pin))
		}
	}
	if len(pinned) > 0 {
		r.Code, r.Details = Warning, "Every live service runs this release but "+strings.Join(pinned, ", ")+
			" still pin an older one. Clear pin_release_version (or set it to auto) and send SIGHUP, conductors first, then APIs."
	}
	return r
}

// checkFinalized reports the finalized-release watermark and fails when it
// blocks a live service (it stops at its next heartbeat) or this binary
// (its services refuse to start).
func checkFinalized(st *Status, table *release.Table) Result {
	r := Result{Check: "Finalized release"}
	fin := st.Finalized
	if fin == nil {
		r.Details = "None yet: it advances when a service starts using a release. Rolling back is safe."
		return r
	}
	at := fmt.Sprintf("release %s (service version %d)", fin.Release, fin.ServiceVersion)
	if table.Head().ServiceVersion < fin.ServiceVersion {
		r.Code, r.Details = Failure, fmt.Sprintf("The cluster was finalized at %s, newer than this binary (release %s, service version %d): "+
			"services of this release refuse to start. Run %s or newer.", at, st.Release, st.ServiceVersion, fin.Release)
		return r
	}
	var blocked []string
	for _, s := range st.Services {
		if s.Live && s.ServiceVersion < fin.ServiceVersion {
			blocked = append(blocked, fmt.Sprintf("%s (release %s, service version %d)", s.Name(), s.Release, s.ServiceVersion))
		}
	}
	if len(blocked) > 0 {
		r.Code, r.Details = Failure, fmt.Sprintf("The cluster was finalized at %s but %s still run older: they stop at their next heartbeat "+
			"and cannot start again. Upgrade them to %s or newer.", at, strings.Join(blocked, ", "), fin.Release)
		return r
	}
	r.Details = fmt.Sprintf("Finalized at %s: services older than it refuse to start, so rolling back below it is no longer possible.", at)
	return r
}

func checkMigrations(st *Status) Result {
	r := Result{Check: "Online data migrations"}
	var pending []string
	for _, m := range st.Migrations {
		if m.Pending > 0 {
			pending = append(pending, fmt.Sprintf("%s: %d object(s)", m.Name, m.Pending))
		}
	}
	if len(pending) > 0 {
		r.Code, r.Details = Warning, "Pending: "+strings.Join(pending, ", ")+
			". Run `rivet dbsync online-data-migrations` until it exits 0; it must finish before the next upgrade."
	}
	return r
}

// describePin renders a registered pin for messages.
func describePin(pin *string) string {
	if pin == nil || *pin == "" {
		return "unpinned"
	}
	return "pin " + *pin
}

func verb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

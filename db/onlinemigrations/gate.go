package onlinemigrations

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rivetmetal/rivet/db"
)

// ErrRefused is wrapped by refusals to run (exit code 2): a live service is
// too old for a migration.
var ErrRefused = errors.New("refused")

// ServiceTooOldError says live services run a service version below what a
// migration needs.
type ServiceTooOldError struct {
	Migration         string
	MinServiceVersion int
	// Older are the live services below MinServiceVersion.
	Older []db.Service
}

// Error names the migration, the service version it needs and the older
// live services.
func (e *ServiceTooOldError) Error() string {
	olds := make([]string, len(e.Older))
	for i, s := range e.Older {
		olds[i] = fmt.Sprintf("%s (release %s, service version %d)", s.Name(), s.Release, s.ServiceVersion)
	}
	return fmt.Sprintf("online migration %s needs every live service at service version %d or later, but %s: "+
		"upgrade those services first (or stop them), then re-run",
		e.Migration, e.MinServiceVersion, strings.Join(olds, ", ")+pluralIs(len(olds)))
}

func pluralIs(n int) string {
	if n == 1 {
		return " is older"
	}
	return " are older"
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *ServiceTooOldError) Is(target error) bool { return target == ErrRefused }

// CheckServices refuses (with the first *ServiceTooOldError found, and the
// others joined) when a live service — online and heartbeated within
// timeout — is older than a migration of ms needs.
func CheckServices(ctx context.Context, d *db.DB, ms []Migration, timeout time.Duration) error {
	needs := false
	for _, m := range ms {
		needs = needs || m.MinServiceVersion > 0
	}
	if !needs {
		return nil
	}
	live, err := d.LiveServices(ctx, timeout)
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range ms {
		var older []db.Service
		for _, s := range live {
			if s.ServiceVersion < m.MinServiceVersion {
				older = append(older, s)
			}
		}
		if len(older) > 0 {
			errs = append(errs, &ServiceTooOldError{Migration: m.Name, MinServiceVersion: m.MinServiceVersion, Older: older})
		}
	}
	return errors.Join(errs...)
}

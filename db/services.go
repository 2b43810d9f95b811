package db

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// Binaries a service registers as.
const (
	BinaryAPI       = "rivet-api"
	BinaryConductor = "rivet-conductor"
)

// DefaultServiceTimeout is how long after its last heartbeat a service still
// counts as live, as Ironic's [conductor] heartbeat_timeout.
const DefaultServiceTimeout = 60 * time.Second

// Service is a row of the services table (ARCHITECTURE §4): one running api
// or conductor process, the release and service version it runs, and its
// heartbeat. Rolling-upgrade decisions (auto pin, finalize, online migration
// gates) read these rows.
type Service struct {
	bun.BaseModel `bun:"table:services,alias:s"`

	ID       int64  `bun:"id,pk,autoincrement"`
	Hostname string `bun:"hostname,notnull"`
	// Binary is BinaryAPI or BinaryConductor.
	Binary string `bun:"binary,notnull"`
	// Release is the release string of the running code (release.Current).
	Release string `bun:"release,notnull"`
	// ServiceVersion is the integer service version of the running code.
	ServiceVersion int `bun:"service_version,notnull"`
	// Pin is the configured pin_release_version, nil when unpinned.
	Pin    *string `bun:"pin"`
	Online bool    `bun:"online,notnull"`
	// CreatedAt is the first registration.
	CreatedAt time.Time `bun:"created_at,notnull"`
	// UpdatedAt is the last heartbeat, in the database clock.
	UpdatedAt time.Time `bun:"updated_at,notnull"`
}

// Name identifies the service in messages: "rivet-conductor on host-1".
func (s Service) Name() string { return s.Binary + " on " + s.Hostname }

// IsLive reports whether s is online and heartbeated within timeout of now
// (a time from DB.Now).
func (s Service) IsLive(now time.Time, timeout time.Duration) bool {
	return s.Online && s.UpdatedAt.After(now.Add(-timeout))
}

// DefaultServiceForgetTimeout is how long after its last heartbeat (or its
// clean stop) a service stops counting for rolling-upgrade decisions, as
// [DEFAULT] service_forget_timeout's default.
const DefaultServiceForgetTimeout = 24 * time.Hour

// ServiceState is what the registry knows of a service (ARCHITECTURE §4).
// Every state but ServiceGone is "known": a known service counts for the
// automatic pin, the finalized release and the online migration gate
// whether or not it is heartbeating, because a service that merely went
// quiet (paused, partitioned, or cut off by a database outage) may come
// back running the release it ran.
type ServiceState string

const (
	// ServiceLive is online and heartbeated within heartbeat_timeout.
	ServiceLive ServiceState = "live"
	// ServiceUnknown is online but has not heartbeated within
	// heartbeat_timeout: it may be paused, partitioned, crashed, or unable
	// to reach the database. Not gone until an operator forgets it or
	// service_forget_timeout passes.
	ServiceUnknown ServiceState = "unknown"
	// ServiceStopped shut down cleanly; it may start again on the same
	// host, with the release it ran (a rollback) or a newer one.
	ServiceStopped ServiceState = "stopped"
	// ServiceGone has not heartbeated (or stopped) for
	// service_forget_timeout; it no longer counts.
	ServiceGone ServiceState = "gone"
)

// Known reports whether the state counts for rolling-upgrade decisions.
func (st ServiceState) Known() bool { return st != ServiceGone }

// Liveness says how services rows are classified (Service.State).
type Liveness struct {
	// Timeout is the heartbeat age beyond which a service is not live:
	// [conductor] heartbeat_timeout; 0 means DefaultServiceTimeout.
	Timeout time.Duration
	// Forget is the heartbeat age beyond which a service that is not live
	// is gone: [DEFAULT] service_forget_timeout; 0 means
	// DefaultServiceForgetTimeout.
	Forget time.Duration
}

// State classifies s at now (a time from DB.Now): live within
// lv.Timeout, gone beyond lv.Forget, unknown or stopped in between.
func (s Service) State(now time.Time, lv Liveness) ServiceState {
	timeout, forget := lv.Timeout, lv.Forget
	if timeout <= 0 {
		timeout = DefaultServiceTimeout
	}
	if forget <= 0 {
		forget = DefaultServiceForgetTimeout
	}
	switch {
	case !s.UpdatedAt.After(now.Add(-forget)):
		return ServiceGone
	case !s.Online:
		return ServiceStopped
	case s.IsLive(now, timeout):
		return ServiceLive
	}
	return ServiceUnknown
}

// ServiceRegistration is what a service reports when it starts.
type ServiceRegistration struct {
	Hostname       string
	Binary         string
	Release        string
	ServiceVersion int
	// Pin is the configured pin_release_version; "" means unpinned.
	Pin string
}

// RegisterService records a starting service as online, creating its row or
// updating the one its (hostname, binary) already has, and returns the row.
func (d *DB) RegisterService(ctx context.Context, r ServiceRegistration) (*Service, error) {
	if r.Hostname == "" || (r.Binary != BinaryAPI && r.Binary != BinaryConductor) {
		return nil, fmt.Errorf("register service %q on %q: want a hostname and binary %s or %s", r.Binary, r.Hostname, BinaryAPI, BinaryConductor)
	}
	action := "register service " + r.Binary + " on " + r.Hostname
	now, err := d.Now(ctx)
	if err != nil {
		return nil, err
	}
	s := &Service{
		Hostname: r.Hostname, Binary: r.Binary, Release: r.Release, ServiceVersion: r.ServiceVersion,
		Online: true, CreatedAt: now, UpdatedAt: now,
	}
	if r.Pin != "" {
		s.Pin = &r.Pin
	}
	// Update first, insert if absent; a concurrent insert of the same
	// service loses on the unique key and updates instead.
	for attempt := 0; attempt < 2; attempt++ {
		res, err := d.bun.NewUpdate().Model(s).
			Column("release", "service_version", "pin", "online", "updated_at").
			Where("? = ? AND ? = ?", bun.Ident("hostname"), s.Hostname, bun.Ident("binary"), s.Binary).
			Exec(ctx)
		if err != nil {
			return nil, d.wrap(err, action)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			break
		}
		_, err = d.bun.NewInsert().Model(s).Exec(ctx)
		if err == nil {
			break
		}
		if !IsUniqueViolation(err) || attempt > 0 {
			return nil, d.wrap(err, action)
		}
	}
	return d.service(ctx, r.Hostname, r.Binary)
}

func (d *DB) service(ctx context.Context, hostname, binary string) (*Service, error) {
	s := new(Service)
	err := d.bun.NewSelect().Model(s).
		Where("? = ? AND ? = ?", bun.Ident("hostname"), hostname, bun.Ident("binary"), binary).
		Scan(ctx)
	if err != nil {
		return nil, d.wrap(err, "read service "+binary+" on "+hostname)
	}
	return s, nil
}

// HeartbeatService marks a registered service online now. It returns an
// error wrapping ErrNotFound when the service never registered (or its row
// was removed), so the caller registers again.
func (d *DB) HeartbeatService(ctx context.Context, hostname, binary string) error {
	return d.touchService(ctx, hostname, binary, true, "heartbeat")
}

// MarkServiceOffline records a clean shutdown, so the service stops counting
// as live at once rather than after the heartbeat timeout.
func (d *DB) MarkServiceOffline(ctx context.Context, hostname, binary string) error {
	return d.touchService(ctx, hostname, binary, false, "mark offline")
}

func (d *DB) touchService(ctx context.Context, hostname, binary string, online bool, what string) error {
	action := what + " service " + binary + " on " + hostname
	now, err := d.Now(ctx)
	if err != nil {
		return err
	}
	s := &Service{Online: online, UpdatedAt: now}
	res, err := d.bun.NewUpdate().Model(s).Column("online", "updated_at").
		Where("? = ? AND ? = ?", bun.Ident("hostname"), hostname, bun.Ident("binary"), binary).
		Exec(ctx)
	if err != nil {
		return d.wrap(err, action)
	}
	if n, err := res.RowsAffected(); err != nil {
		return d.wrap(err, action)
	} else if n == 0 {
		return fmt.Errorf("%s: service is not registered: %w", action, ErrNotFound)
	}
	return nil
}

// SetServicePin records the pin_release_version a registered service uses
// now ("" unpinned), as soon as a SIGHUP reload applied it, so peers that
// check the skew rules (db/upgrade.Guard) see it before the next heartbeat.
func (d *DB) SetServicePin(ctx context.Context, hostname, binary, pin string) error {
	action := "record the pin of service " + binary + " on " + hostname
	s := &Service{}
	if pin != "" {
		s.Pin = &pin
	}
	res, err := d.bun.NewUpdate().Model(s).Column("pin").
		Where("? = ? AND ? = ?", bun.Ident("hostname"), hostname, bun.Ident("binary"), binary).
		Exec(ctx)
	if err != nil {
		return d.wrap(err, action)
	}
	if n, err := res.RowsAffected(); err != nil {
		return d.wrap(err, action)
	} else if n == 0 {
		return fmt.Errorf("%s: service is not registered: %w", action, ErrNotFound)
	}
	return nil
}

// Services lists every registered service, live or not, by binary then
// hostname.
func (d *DB) Services(ctx context.Context) ([]Service, error) {
	var out []Service
	err := d.bun.NewSelect().Model(&out).
		OrderExpr("? ASC, ? ASC", bun.Ident("binary"), bun.Ident("hostname")).
		Scan(ctx)
	if err != nil {
		return nil, d.wrap(err, "list services")
	}
	return out, nil
}

// LiveServices lists the services that are online and heartbeated within
// timeout of the database clock, by binary then hostname.
func (d *DB) LiveServices(ctx context.Context, timeout time.Duration) ([]Service, error) {
	now, err := d.Now(ctx)
	if err != nil {
		return nil, err
	}
	var out []Service
	err = d.bun.NewSelect().Model(&out).
		Where("? = ?", bun.Ident("online"), true).
		Where("? > ?", bun.Ident("updated_at"), now.Add(-timeout)).
		OrderExpr("? ASC, ? ASC", bun.Ident("binary"), bun.Ident("hostname")).
		Scan(ctx)
	if err != nil {
		return nil, d.wrap(err, "list live services")
	}
	return out, nil
}

// Counts reports whether s counts for rolling-upgrade decisions (the
// automatic pin, the checks of a pin, the online migration gate) at now:
// it is known (not gone), and not older than the finalized release
// finalizedSV (0 for none). A service older than the finalized release can
// no longer start, and one still running stops at its next heartbeat, so it
// can no longer hold the fleet back: a refused start (which registers, then
// marks itself offline) must not pull an automatic pin back down.
func (s Service) Counts(now time.Time, lv Liveness, finalizedSV int) bool {
	return s.State(now, lv).Known() && s.ServiceVersion >= finalizedSV
}

// ForgetService removes a service's row: an operator's word that it is gone
// for good (`rivet upgrade forget`), so it stops counting for the automatic
// pin and the finalized release. It returns the removed row, or an error
// wrapping ErrNotFound when there is none. A service that was not gone after
// all registers again at its next heartbeat.
func (d *DB) ForgetService(ctx context.Context, hostname, binary string) (*Service, error) {
	action := "forget service " + binary + " on " + hostname
	s, err := d.service(ctx, hostname, binary)
	if isNoRows(err) {
		return nil, fmt.Errorf("%s: service is not registered: %w", action, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	res, err := d.bun.NewDelete().Model((*Service)(nil)).
		Where("? = ? AND ? = ?", bun.Ident("hostname"), hostname, bun.Ident("binary"), binary).
		Exec(ctx)
	if err != nil {
		return nil, d.wrap(err, action)
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, d.wrap(err, action)
	} else if n == 0 {
		return nil, fmt.Errorf("%s: service is not registered: %w", action, ErrNotFound)
	}
	return s, nil
}

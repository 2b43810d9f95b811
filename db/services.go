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

package db

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
)

// ConductorPlugin is a row of conductor_plugins: what one conductor
// negotiated with the driver plugin serving one hardware type, or, with
// Status "refused" and an empty HardwareType, why a plugin was refused.
// Operators read it to see which driver versions each conductor runs.
type ConductorPlugin struct {
	bun.BaseModel `bun:"table:conductor_plugins,alias:cp"`

	ID           int64  `bun:"id,pk,autoincrement"`
	ConductorID  int64  `bun:"conductor_id,notnull"`
	HardwareType string `bun:"hardware_type,notnull"`
	// Driver is the plugin's driver name ("fake", "redfish").
	Driver *string `bun:"driver"`
	// Status is "ok" or "refused".
	Status        *string `bun:"status"`
	PluginName    *string `bun:"plugin_name"`
	PluginVersion *string `bun:"plugin_version"`
	// Protocol is the negotiated go-plugin protocol major.
	Protocol *int `bun:"protocol"`
	// Interfaces maps each negotiated interface to its API version.
	Interfaces JSONObject `bun:"interfaces"`
	// Capabilities lists the optional features the plugin advertised.
	Capabilities JSONStrings `bun:"capabilities"`
	Path         *string     `bun:"path"`
	BuiltIn      *bool       `bun:"built_in"`
	Pinned       *bool       `bun:"pinned"`
	// Error is why a refused plugin was refused.
	Error *string `bun:"error"`
	Timestamps
}

// TableConductorPlugins holds ConductorPlugin rows.
const TableConductorPlugins = "conductor_plugins"

// ConductorRegistration is what a starting conductor records about itself.
type ConductorRegistration struct {
	// Hostname is [DEFAULT] host, or host:port for a JSON-RPC port other
	// than the default.
	Hostname string
	// Group is the conductor group; it is stored lowercased.
	Group string
	// Drivers are the hardware types the conductor serves.
	Drivers []string
	// Version is the Conductor object version the row is written at.
	Version string
	// Interfaces replace the conductor's hardware interface rows
	// (ConductorID is filled in).
	Interfaces []ConductorHardwareInterface
	// Plugins replace the conductor's plugin rows (ConductorID is filled in).
	Plugins []ConductorPlugin
}

// RegisterConductor records a starting conductor as online with a fresh
// heartbeat (Ironic's Conductor.register with update_existing): it creates
// or updates the hostname's row and replaces its hardware interface and
// plugin rows, in one transaction. It returns the conductor's row.
func (d *DB) RegisterConductor(ctx context.Context, r ConductorRegistration) (*Conductor, error) {
	action := "register conductor " + r.Hostname
	if r.Hostname == "" {
		return nil, fmt.Errorf("%s: a hostname is required", action)
	}
	now, err := d.Now(ctx)
	if err != nil {
		return nil, err
	}
	c := &Conductor{Hostname: r.Hostname, ConductorGroup: strings.ToLower(r.Group), Online: true,
		Drivers: JSONStrings(r.Drivers), Version: &r.Version}
	c.CreatedAt, c.UpdatedAt = now, bun.NullTime{Time: now}
	err = d.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Table(TableConductors).
			Set("conductor_group = ?", c.ConductorGroup).
			Set("online = ?", true).
			Set("drivers = ?", c.Drivers).
			Set("version = ?", r.Version).
			Set("updated_at = ?", now).
			Where("? = ?", bun.Ident("hostname"), r.Hostname).
			Exec(ctx)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			if _, err := tx.NewInsert().Model(c).Exec(ctx); err != nil {
				return err
			}
		}
		if err := tx.NewSelect().Model(c).Where("? = ?", bun.Ident("hostname"), r.Hostname).Scan(ctx); err != nil {
			return err
		}
		for _, table := range []string{TableConductorHardwareInterfaces, TableConductorPlugins} {
			if _, err := tx.NewDelete().Table(table).Where("conductor_id = ?", c.ID).Exec(ctx); err != nil {
				return err
			}
		}
		for i := range r.Interfaces {
			r.Interfaces[i].ConductorID = c.ID
		}
		if len(r.Interfaces) > 0 {
			if _, err := tx.NewInsert().Model(&r.Interfaces).Exec(ctx); err != nil {
				return err
			}
		}
		for i := range r.Plugins {
			r.Plugins[i].ConductorID = c.ID
		}
		if len(r.Plugins) > 0 {
			if _, err := tx.NewInsert().Model(&r.Plugins).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, d.wrap(err, action)
	}
	return c, nil
}

// TouchConductor records a heartbeat: updated_at is set to the database
// clock and online to online (false while shutting down, as Ironic's
// touch_conductor). A conductor without a row gives an error wrapping
// ErrNotFound, so the caller registers again.
func (d *DB) TouchConductor(ctx context.Context, hostname string, online bool) error {
	action := "heartbeat conductor " + hostname
	now, err := d.Now(ctx)
	if err != nil {
		return err
	}
	res, err := d.bun.NewUpdate().Table(TableConductors).
		Set("online = ?", online).
		Set("updated_at = ?", now).
		Where("? = ?", bun.Ident("hostname"), hostname).
		Exec(ctx)
	if err != nil {
		return d.wrap(err, action)
	}
	if n, err := res.RowsAffected(); err != nil {
		return d.wrap(err, action)
	} else if n == 0 {
		return fmt.Errorf("%s: conductor is not registered: %w", action, ErrNotFound)
	}
	return nil
}

// ConductorPlugins lists the plugin rows of the conductor with hostname,
// by hardware type then driver.
func (d *DB) ConductorPlugins(ctx context.Context, hostname string) ([]ConductorPlugin, error) {
	var out []ConductorPlugin
	err := d.bun.NewSelect().Model(&out).
		Join("JOIN conductors AS c ON c.id = cp.conductor_id").
		Where("c.hostname = ?", hostname).
		OrderExpr("cp.hardware_type ASC, cp.driver ASC").
		Scan(ctx)
	if err != nil {
		return nil, d.wrap(err, "list plugins of conductor "+hostname)
	}
	return out, nil
}

// HardwareInterfaces lists the hardware interface rows of the conductors
// named by hostnames (every registered conductor's when hostnames is nil),
// by hardware type, interface type and name.
func (d *DB) HardwareInterfaces(ctx context.Context, hostnames []string) ([]ConductorHardwareInterface, error) {
	out := []ConductorHardwareInterface{}
	if hostnames != nil && len(hostnames) == 0 {
		return out, nil
	}
	q := d.bun.NewSelect().Model(&out).
		OrderExpr("chi.hardware_type ASC, chi.interface_type ASC, chi.interface_name ASC")
	if hostnames != nil {
		q = q.Join("JOIN conductors AS c ON c.id = chi.conductor_id").Where("c.hostname IN (?)", bun.List(hostnames))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, d.wrap(err, "list hardware interfaces")
	}
	return out, nil
}

package db

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// TableFinalizedRelease holds the cluster's finalized-release watermark.
const TableFinalizedRelease = "finalized_release"

// finalizedReleaseID is the id of the one row of finalized_release.
const finalizedReleaseID = 1

// FinalizedRelease is the cluster's finalized-release watermark
// (ARCHITECTURE §4): the newest release whose object versions services may
// write. It only moves forward; a service older than it refuses to start.
type FinalizedRelease struct {
	bun.BaseModel `bun:"table:finalized_release,alias:fr"`

	ID int64 `bun:"id,pk"`
	// Release is the release string: a cut release's semver key, or the
	// release.Current of a build between releases.
	Release string `bun:"release,notnull"`
	// ServiceVersion is the release's service version; it orders watermarks.
	ServiceVersion int `bun:"service_version,notnull"`
	// UpdatedAt is when the watermark last advanced, in the database clock.
	UpdatedAt time.Time `bun:"updated_at,notnull"`
}

// FinalizedRelease returns the watermark, or nil when no service has set
// one yet.
func (d *DB) FinalizedRelease(ctx context.Context) (*FinalizedRelease, error) {
	fr := new(FinalizedRelease)
	err := d.bun.NewSelect().Model(fr).Where("? = ?", bun.Ident("id"), finalizedReleaseID).Scan(ctx)
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, d.wrap(err, "read the finalized release")
	}
	return fr, nil
}

// AdvanceFinalizedRelease raises the watermark to (release, serviceVersion)
// unless it is already at serviceVersion or above: the watermark never goes
// down, and of concurrent advances the highest wins. It returns the
// watermark as it stands afterwards and whether this call moved it.
func (d *DB) AdvanceFinalizedRelease(ctx context.Context, release string, serviceVersion int) (*FinalizedRelease, bool, error) {
	action := fmt.Sprintf("advance the finalized release to %s (service version %d)", release, serviceVersion)
	if release == "" || serviceVersion < 1 {
		return nil, false, fmt.Errorf("%s: want a release and a service version of 1 or more", action)
	}
	now, err := d.Now(ctx)
	if err != nil {
		return nil, false, err
	}
	fr := &FinalizedRelease{ID: finalizedReleaseID, Release: release, ServiceVersion: serviceVersion, UpdatedAt: now}
	// Compare-and-set on the service version; insert when there is no row
	// yet. A concurrent first insert loses on the primary key and retries
	// the compare-and-set once.
	for attempt := 0; ; attempt++ {
		res, err := d.bun.NewUpdate().Model(fr).Column("release", "service_version", "updated_at").
			Where("? = ? AND ? < ?", bun.Ident("id"), finalizedReleaseID, bun.Ident("service_version"), serviceVersion).
			Exec(ctx)
		if err != nil {
			return nil, false, d.wrap(err, action)
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, false, d.wrap(err, action)
		} else if n > 0 {
			cur, err := d.FinalizedRelease(ctx)
			return cur, true, err
		}
		cur, err := d.FinalizedRelease(ctx)
		if err != nil {
			return nil, false, err
		}
		if cur != nil {
			if cur.ServiceVersion >= serviceVersion {
				return cur, false, nil
			}
			// The row appeared (a concurrent first insert committed) after
			// the update looked: compare-and-set again.
			continue
		}
		_, err = d.bun.NewInsert().Model(fr).Exec(ctx)
		if err == nil {
			cur, err := d.FinalizedRelease(ctx)
			return cur, true, err
		}
		if !IsUniqueViolation(err) || attempt > 0 {
			return nil, false, d.wrap(err, action)
		}
	}
}

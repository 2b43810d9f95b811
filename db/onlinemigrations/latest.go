package onlinemigrations

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/rivetmetal/rivet/core/keyring"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
	"github.com/rivetmetal/rivet/db"
	"github.com/uptrace/bun"
)

// LatestName is the name of the migration that must run last.
const LatestName = "update_to_latest_versions"

// UpdateToLatestVersions returns Ironic's update_to_latest_versions, done
// through the versioned core: each object row whose version is not its
// kind's latest is loaded (converted to latest, keeping what the
// conversion changed) and saved at latest, so non-additive changes (a
// moved value) are migrated too, not just the version string. It needs
// every live service to run head's service version, since they must all
// read the latest versions; register it last. keys are the services'
// credential keys ([DEFAULT] credential_key_file; nil when none): rows are
// read and written through a Store, which decrypts and encrypts node
// credentials.
func UpdateToLatestVersions(reg *objects.Registry, head release.Entry, keys *keyring.Keyring) (Migration, error) {
	table, err := release.NewTable(head)
	if err != nil {
		return Migration{}, err
	}
	pinner := release.NewPinner(table, release.Pin{Mode: release.PinLatest})
	return Migration{
		Name:              LatestName,
		MinServiceVersion: head.ServiceVersion,
		Run: func(ctx context.Context, d *db.DB, maxCount int, _ map[string]string) (int, int, error) {
			return updateToLatest(ctx, db.NewStore(d, reg, pinner).WithKeyring(keys), maxCount)
		},
		Pending: func(ctx context.Context, d *db.DB) (int, error) {
			total := 0
			for _, kind := range db.ObjectKinds() {
				n, err := staleRows(d, reg, kind).Count(ctx)
				if err != nil {
					return 0, fmt.Errorf("count %s rows to migrate: %w", kind, err)
				}
				total += int(n)
			}
			return total, nil
		},
	}, nil
}

// staleRows selects kind's rows written at a version other than latest.
func staleRows(d *db.DB, reg *objects.Registry, kind string) *bun.SelectQuery {
	latest, _ := reg.Latest(kind) // kinds come from db.ObjectKinds, all registered
	return d.Bun().NewSelect().Table(db.ObjectTables()[kind]).
		Where("version IS NOT NULL AND version <> ?", latest.String())
}

func updateToLatest(ctx context.Context, s *db.Store, maxCount int) (total, migrated int, err error) {
	reg := s.Registry()
	tables := db.ObjectTables()
	for _, kind := range db.ObjectKinds() {
		latest, err := reg.Latest(kind)
		if err != nil {
			return total, migrated, err
		}
		n, err := staleRows(s.DB(), reg, kind).Count(ctx)
		if err != nil {
			return total, migrated, fmt.Errorf("count %s rows to migrate: %w", tables[kind], err)
		}
		total += int(n)
		budget := maxCount - migrated
		if n == 0 || (maxCount > 0 && budget <= 0) {
			continue
		}
		q := staleRows(s.DB(), reg, kind).Column("id").OrderExpr("id ASC")
		if maxCount > 0 {
			q = q.Limit(int64(budget))
		}
		var ids []int64
		if err := q.Scan(ctx, &ids); err != nil {
			return total, migrated, fmt.Errorf("select %s rows to migrate: %w", tables[kind], err)
		}
		for chunk := range slices.Chunk(ids, ChunkSize) {
			n, err := migrateRows(ctx, s, kind, latest, chunk)
			migrated += n
			if err != nil {
				return total, migrated, err
			}
		}
	}
	return total, migrated, nil
}

// migrateRows loads kind's rows of ids still below latest in one query and
// saves each at latest. A row deleted meanwhile needs nothing; one a
// service rewrote at latest meanwhile is not loaded.
func migrateRows(ctx context.Context, s *db.Store, kind string, latest version.Version, ids []int64) (migrated int, err error) {
	objs, err := s.LoadAll(ctx, kind, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("?TableAlias.id IN (?)", bun.List(ids)).Where("?TableAlias.version <> ?", latest.String()).OrderExpr("?TableAlias.id ASC")
	})
	if err != nil {
		return 0, fmt.Errorf("migrate %s rows %d to %d: %w", kind, ids[0], ids[len(ids)-1], err)
	}
	for _, obj := range objs {
		if err := s.Save(ctx, obj); err != nil {
			if errors.Is(err, db.ErrNotFound) {
				continue
			}
			id, _ := s.Registry().Get(obj, "id")
			return migrated, fmt.Errorf("migrate %s %v: %w", kind, id, err)
		}
		migrated++
	}
	return migrated, nil
}

package db

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
)

// Reading one node without bun's query builder and reflective scanner.
//
// GET /v1/nodes/{ident} is the API's most frequent request. Through bun it
// built the SELECT's text anew every time (with the identifier written into
// it, so each node was a new statement to PostgreSQL) and scanned the row
// by reflection, a quarter of the request's API CPU. Here the statement is
// written once per dialect and column, with the identifier as a bind
// parameter, so PostgreSQL prepares it once per connection; the row is
// scanned into typed destinations; the node is then built by fromRow as
// before. TestGetNodeTypedMatchesBun holds both paths equal on every
// dialect.

// nodeDest returns where column col of r is scanned to, or nil for a
// column it does not know (then GetNode takes bun's path).
func (r *Node) nodeDest(col string) any {
	switch col {
	case "id":
		return &r.ID
	case "uuid":
		return &r.UUID
	case "name":
		return nullString{&r.Name}
	case "chassis_id":
		return nullInt64{&r.ChassisID}
	case "driver":
		return &r.Driver
	case "driver_info":
		return &r.DriverInfo
	case "driver_internal_info":
		return &r.DriverInternalInfo
	case "extra":
		return &r.Extra
	case "instance_info":
		return &r.InstanceInfo
	case "properties":
		return &r.Properties
	case "clean_step":
		return &r.CleanStep
	case "raid_config":
		return &r.RAIDConfig
	case "target_raid_config":
		return &r.TargetRAIDConfig
	case "instance_uuid":
		return nullString{&r.InstanceUUID}
	case "last_error":
		return nullString{&r.LastError}
	case "maintenance":
		return &r.Maintenance
	case "maintenance_reason":
		return nullString{&r.MaintenanceReason}
	case "power_state":
		return nullString{&r.PowerState}
	case "target_power_state":
		return nullString{&r.TargetPowerState}
	case "provision_state":
		return nullString{&r.ProvisionState}
	case "target_provision_state":
		return nullString{&r.TargetProvisionState}
	case "provision_updated_at":
		return &r.ProvisionUpdatedAt
	case "inspection_started_at":
		return &r.InspectionStartedAt
	case "inspection_finished_at":
		return &r.InspectionFinishedAt
	case "network_interface":
		return nullString{&r.NetworkInterface}
	case "resource_class":
		return nullString{&r.ResourceClass}
	case "console_enabled":
		return &r.ConsoleEnabled
	case "conductor_affinity":
		return nullInt64{&r.ConductorAffinity}
	case "conductor_group":
		return &r.ConductorGroup
	case "reservation":
		return nullString{&r.Reservation}
	case "reservation_expires_at":
		return &r.ReservationExpiresAt
	case "reservation_epoch":
		return &r.ReservationEpoch
	case "boot_interface":
		return nullString{&r.BootInterface}
	case "console_interface":
		return nullString{&r.ConsoleInterface}
	case "deploy_interface":
		return nullString{&r.DeployInterface}
	case "inspect_interface":
		return nullString{&r.InspectInterface}
	case "management_interface":
		return nullString{&r.ManagementInterface}
	case "power_interface":
		return nullString{&r.PowerInterface}
	case "raid_interface":
		return nullString{&r.RAIDInterface}
	case "vendor_interface":
		return nullString{&r.VendorInterface}
	case "storage_interface":
		return nullString{&r.StorageInterface}
	case "rescue_interface":
		return nullString{&r.RescueInterface}
	case "bios_interface":
		return nullString{&r.BIOSInterface}
	case "firmware_interface":
		return nullString{&r.FirmwareInterface}
	case "fault":
		return nullString{&r.Fault}
	case "deploy_step":
		return &r.DeployStep
	case "automated_clean":
		return nullBool{&r.AutomatedClean}
	case "protected":
		return nullBool{&r.Protected}
	case "protected_reason":
		return nullString{&r.ProtectedReason}
	case "description":
		return nullString{&r.Description}
	case "retired":
		return nullBool{&r.Retired}
	case "retired_reason":
		return nullString{&r.RetiredReason}
	case "shard":
		return nullString{&r.Shard}
	case "parent_node":
		return nullString{&r.ParentNode}
	case "disable_power_off":
		return nullBool{&r.DisablePowerOff}
	case "instance_name":
		return nullString{&r.InstanceName}
	case "health":
		return nullString{&r.Health}
	case "allocation_id":
		return nullInt64{&r.AllocationID}
	case "owner":
		return nullString{&r.Owner}
	case "lessee":
		return nullString{&r.Lessee}
	case "created_at":
		return notNullTime{&r.CreatedAt}
	case "updated_at":
		return &r.UpdatedAt
	case "version":
		return nullString{&r.Version}
	}
	return nil
}

// nullString scans a nullable text column into a *string (nil for NULL)
// without database/sql's reflective pointer-to-pointer assignment.
type nullString struct{ p **string }

func (d nullString) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*d.p = nil
	case string:
		*d.p = &v
	case []byte:
		s := string(v)
		*d.p = &s
	default:
		return fmt.Errorf("db: cannot read %T as text", src)
	}
	return nil
}

// nullBool scans a nullable boolean column into a *bool (SQLite and
// MySQL hold booleans as integers).
type nullBool struct{ p **bool }

func (d nullBool) Scan(src any) error {
	if src == nil {
		*d.p = nil
		return nil
	}
	var b sql.NullBool
	if err := b.Scan(src); err != nil {
		return err
	}
	*d.p = &b.Bool
	return nil
}

// nullInt64 scans a nullable integer column into a *int64.
type nullInt64 struct{ p **int64 }

func (d nullInt64) Scan(src any) error {
	if src == nil {
		*d.p = nil
		return nil
	}
	var n sql.NullInt64
	if err := n.Scan(src); err != nil {
		return err
	}
	*d.p = &n.Int64
	return nil
}

// notNullTime scans a timestamp column as bun does (time values, or the
// text SQLite and MySQL may return) into a time.Time.
type notNullTime struct{ p *time.Time }

func (d notNullTime) Scan(src any) error {
	var t bun.NullTime
	if err := t.Scan(src); err != nil {
		return err
	}
	*d.p = t.Time
	return nil
}

// nodeQuery is the statement reading the node whose column equals one
// bind parameter, and its columns in order.
type nodeQuery struct {
	text string
	cols []string
}

// nodeQueries caches nodeQuery per dialect and column; a nil entry means
// the typed path cannot serve (a column nodeDest does not know).
var nodeQueries sync.Map // [2]string{dialect, column} → *nodeQuery

// nodeQueryFor returns the statement selecting a node by col, or nil when
// the nodes model has a column nodeDest does not know.
func (s *Store) nodeQueryFor(col string) *nodeQuery {
	key := [2]string{string(s.db.dialect), col}
	if q, ok := nodeQueries.Load(key); ok {
		return q.(*nodeQuery)
	}
	q := s.buildNodeQuery(col)
	nodeQueries.Store(key, q)
	return q
}

func (s *Store) buildNodeQuery(col string) *nodeQuery {
	table := s.db.bun.Table(reflect.TypeFor[Node]())
	quote := func(id string) string {
		q := string(s.db.bun.Dialect().IdentQuote())
		return q + id + q
	}
	var probe Node
	q := &nodeQuery{}
	names := make([]string, 0, len(table.Fields))
	for _, f := range table.Fields {
		if probe.nodeDest(f.Name) == nil {
			return nil
		}
		q.cols = append(q.cols, f.Name)
		names = append(names, quote(f.Name))
	}
	if probe.nodeDest(col) == nil {
		return nil
	}
	param := "?"
	if s.db.dialect == Postgres {
		param = "$1"
	}
	q.text = "SELECT " + strings.Join(names, ", ") + " FROM " + quote(table.Name) + " WHERE " + quote(col) + " = " + param + " LIMIT 1"
	return q
}

// loadNodeBy reads the node whose col equals value, built as Load builds
// it; ok is false when the typed path cannot serve and the caller should
// use Load.
func (s *Store) loadNodeBy(ctx context.Context, col string, value any) (n *Node, ok bool, err error) {
	q := s.nodeQueryFor(col)
	if q == nil {
		return nil, false, nil
	}
	row := new(Node)
	dests := make([]any, len(q.cols))
	for i, c := range q.cols {
		dests[i] = row.nodeDest(c)
	}
	if err := s.queryRow(ctx, q.text, value, dests); err != nil {
		return nil, true, s.db.wrap(notFound(err), "load Node")
	}
	return row, true, nil
}

// queryRow runs a one-row query with one bind parameter and scans its
// columns into dests. On PostgreSQL it goes to pgx directly on a pooled
// connection: database/sql's pgx adapter builds a converter per column for
// every result (83 allocations for a node) and then boxes each value, a
// cost that is its own once the statement itself is prepared.
func (s *Store) queryRow(ctx context.Context, text string, arg any, dests []any) error {
	if s.db.dialect != Postgres {
		return s.db.bun.DB.QueryRowContext(ctx, text, arg).Scan(dests...)
	}
	return s.withPgx(ctx, func(pc *pgx.Conn) error {
		rows, err := pc.Query(ctx, text, arg)
		if err != nil {
			return err
		}
		defer rows.Close()
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return pgx.ErrNoRows
		}
		if !rawScan(rows.FieldDescriptions(), rows.RawValues(), dests) {
			if err := rows.Scan(dests...); err != nil {
				return err
			}
		}
		rows.Close()
		return rows.Err()
	})
}

// withPgx runs f with the pgx connection under one of the pool's
// PostgreSQL connections, held for f's duration.
func (s *Store) withPgx(ctx context.Context, f func(*pgx.Conn) error) error {
	conn, err := s.db.bun.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		switch c := dc.(type) {
		case *secondSightConn:
			return f(c.Conn.Conn())
		case *stdlib.Conn:
			return f(c.Conn())
		}
		return fmt.Errorf("db: PostgreSQL connection is %T, not pgx's", dc)
	})
}

// PostgreSQL type OIDs rawScan decodes.
const (
	oidBool        = 16
	oidInt8        = 20
	oidText        = 25
	oidVarchar     = 1043
	oidTimestamptz = 1184
)

// rawScan decodes a row's raw values into the destinations nodeDest
// gives, for the types and wire formats the nodes table has on PostgreSQL
// (text, bigint, boolean, timestamptz in binary); false when a column has
// another type, format or an unexpected NULL (found before anything is
// written) or holds a JSON document that does not decode (found while
// decoding), and pgx's Scan, which writes every destination again, must
// do it or report the error. pgx plans a scan per column of every result
// and hands text to a sql.Scanner as a new string: 60 of a GET's
// allocations.
func rawScan(fds []pgconn.FieldDescription, vals [][]byte, dests []any) bool {
	if len(fds) != len(dests) || len(vals) != len(dests) {
		return false
	}
	for i, d := range dests {
		if !rawScannable(d, fds[i], vals[i]) {
			return false
		}
	}
	for i, d := range dests {
		v := vals[i]
		switch d := d.(type) {
		case *int64:
			*d = int64(binary.BigEndian.Uint64(v))
		case nullInt64:
			if v == nil {
				*d.p = nil
			} else {
				n := int64(binary.BigEndian.Uint64(v))
				*d.p = &n
			}
		case *string:
			*d = string(v)
		case nullString:
			if v == nil {
				*d.p = nil
			} else {
				str := string(v)
				*d.p = &str
			}
		case *bool:
			*d = v[0] != 0
		case nullBool:
			if v == nil {
				*d.p = nil
			} else {
				b := v[0] != 0
				*d.p = &b
			}
		case *JSONObject:
			var src any
			if v != nil {
				src = v
			}
			if err := d.Scan(src); err != nil {
				return false // pgx's Scan reports it
			}
		case *bun.NullTime:
			if v == nil {
				d.Time = time.Time{}
			} else {
				d.Time = pgTimestamptz(v)
			}
		case notNullTime:
			*d.p = pgTimestamptz(v)
		}
	}
	return true
}

// rawScannable reports whether rawScan can decode v, of the column fd, into d.
func rawScannable(d any, fd pgconn.FieldDescription, v []byte) bool {
	binaryOf := func(oid uint32, size int) bool {
		return fd.DataTypeOID == oid && fd.Format == pgx.BinaryFormatCode && len(v) == size
	}
	text := fd.DataTypeOID == oidText || fd.DataTypeOID == oidVarchar
	switch d.(type) {
	case *int64:
		return binaryOf(oidInt8, 8)
	case nullInt64:
		return v == nil && fd.DataTypeOID == oidInt8 || binaryOf(oidInt8, 8)
	case *string:
		return text && v != nil
	case nullString, *JSONObject:
		return text
	case *bool:
		return binaryOf(oidBool, 1)
	case nullBool:
		return v == nil && fd.DataTypeOID == oidBool || binaryOf(oidBool, 1)
	case *bun.NullTime:
		return v == nil && fd.DataTypeOID == oidTimestamptz || binaryOf(oidTimestamptz, 8) && finiteTimestamp(v)
	case notNullTime:
		return binaryOf(oidTimestamptz, 8) && finiteTimestamp(v)
	}
	return false
}

// microsecondsToY2K is the PostgreSQL epoch (2000-01-01 UTC) in Unix
// microseconds.
const microsecondsToY2K = 946_684_800 * 1_000_000

// finiteTimestamp reports whether a binary timestamptz is not ±infinity.
func finiteTimestamp(v []byte) bool {
	us := int64(binary.BigEndian.Uint64(v))
	return us != math.MaxInt64 && us != math.MinInt64
}

// pgTimestamptz decodes a finite binary timestamptz (microseconds since
// 2000-01-01 UTC) as pgx does, in the local zone; the object layer keeps
// times in UTC.
func pgTimestamptz(v []byte) time.Time {
	us := int64(binary.BigEndian.Uint64(v))
	return time.Unix(microsecondsToY2K/1_000_000+us/1_000_000, (microsecondsToY2K%1_000_000*1_000)+(us%1_000_000*1_000))
}

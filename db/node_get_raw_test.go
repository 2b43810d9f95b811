package db

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
)

// TestRawScan: rawScan decodes PostgreSQL's binary int8, bool and
// timestamptz and text columns as pgx would, and declines (leaving pgx's
// Scan to decode or report) other types, text-format numbers, ±infinity
// and NULL in a column that cannot hold it.
func TestRawScan(t *testing.T) {
	be := func(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }
	fd := func(oid uint32, format int16) pgconn.FieldDescription {
		return pgconn.FieldDescription{DataTypeOID: oid, Format: format}
	}
	bin, txt := int16(pgx.BinaryFormatCode), int16(pgx.TextFormatCode)
	when := time.Date(2026, 11, 22, 16, 30, 1, 123456000, time.UTC)
	before := time.Date(1999, 12, 31, 23, 59, 59, 500000000, time.UTC)
	us := func(t time.Time) int64 { return t.UnixMicro() - microsecondsToY2K }

	var r Node
	fds := []pgconn.FieldDescription{fd(oidInt8, bin), fd(oidInt8, bin), fd(oidText, txt), fd(oidVarchar, bin), fd(oidText, bin),
		fd(oidBool, bin), fd(oidText, txt), fd(oidTimestamptz, bin), fd(oidTimestamptz, bin), fd(oidTimestamptz, bin), fd(oidInt8, bin)}
	vals := [][]byte{be(-7), be(42), []byte("fake-hardware"), []byte("n1"), nil, {1}, []byte(`{"a":1}`), be(us(when)), nil, be(us(before)), nil}
	dests := []any{&r.ID, nullInt64{&r.ChassisID}, &r.Driver, nullString{&r.Name}, nullString{&r.LastError},
		&r.Maintenance, &r.Extra, notNullTime{&r.CreatedAt}, &r.UpdatedAt, &r.ProvisionUpdatedAt, nullInt64{&r.ConductorAffinity}}
	stale, nine := "stale", int64(9)
	r.LastError, r.ConductorAffinity = &stale, &nine
	r.UpdatedAt = bun.NullTime{Time: when}
	if !rawScan(fds, vals, dests) {
		t.Fatal("rawScan declined the nodes table's own column types")
	}
	switch {
	case r.ID != -7 || r.ChassisID == nil || *r.ChassisID != 42 || r.Driver != "fake-hardware" || r.Name == nil || *r.Name != "n1":
		t.Fatalf("scalars: %+v", r)
	case r.LastError != nil || r.ConductorAffinity != nil || !r.UpdatedAt.IsZero():
		t.Fatal("NULL did not clear a nullable destination")
	case !r.Maintenance || r.Extra["a"] == nil:
		t.Fatalf("bool/JSON: %v %v", r.Maintenance, r.Extra)
	case !r.CreatedAt.Equal(when) || !r.ProvisionUpdatedAt.Equal(before):
		t.Fatalf("timestamps: %v, %v", r.CreatedAt, r.ProvisionUpdatedAt.Time)
	}

	declined := []struct {
		what string
		fd   pgconn.FieldDescription
		val  []byte
		dest any
	}{
		{"text-format int8", fd(oidInt8, txt), []byte("42"), &r.ID},
		{"int4 column", fd(23, bin), []byte{0, 0, 0, 1}, &r.ID},
		{"NULL into a non-null int", fd(oidInt8, bin), nil, &r.ID},
		{"NULL into a non-null string", fd(oidText, txt), nil, &r.Driver},
		{"bytea as text", fd(17, bin), []byte("x"), nullString{&r.Name}},
		{"text-format bool", fd(oidBool, txt), []byte("t"), &r.Maintenance},
		{"infinity", fd(oidTimestamptz, bin), be(math.MaxInt64), notNullTime{&r.CreatedAt}},
		{"-infinity", fd(oidTimestamptz, bin), be(math.MinInt64), &r.UpdatedAt},
		{"timestamp without zone", fd(1114, bin), be(0), &r.UpdatedAt},
		{"short int8", fd(oidInt8, bin), []byte{1}, nullInt64{&r.ChassisID}},
		{"JSON that is not an object", fd(oidText, txt), []byte(`[1]`), &r.Extra},
		{"unknown destination", fd(oidText, txt), []byte("x"), new(int)},
	}
	for _, c := range declined {
		id := r.ID
		if rawScan([]pgconn.FieldDescription{fd(oidInt8, bin), c.fd}, [][]byte{be(id + 1), c.val}, []any{&r.ID, c.dest}) {
			t.Errorf("%s: rawScan decoded it", c.what)
		}
		if c.what != "JSON that is not an object" && r.ID != id {
			t.Errorf("%s: rawScan wrote a destination before declining", c.what)
		}
	}
	if rawScan(fds[:1], vals, dests) {
		t.Error("rawScan accepted a row whose width differs from its destinations")
	}
}

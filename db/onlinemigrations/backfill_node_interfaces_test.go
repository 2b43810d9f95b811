package onlinemigrations

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/catalog"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// nodeRow is what the backfill test reads back of a node.
type nodeRow struct {
	Driver  string
	Version string
	Columns map[string]*string
}

func readNodes(t *testing.T, dbh *db.DB) map[string]nodeRow {
	t.Helper()
	var rows []db.Node
	if err := dbh.Bun().NewSelect().Model(&rows).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := map[string]nodeRow{}
	for _, r := range rows {
		cols := map[string]*string{"boot": r.BootInterface, "console": r.ConsoleInterface, "deploy": r.DeployInterface,
			"inspect": r.InspectInterface, "management": r.ManagementInterface, "network": r.NetworkInterface,
			"power": r.PowerInterface, "raid": r.RAIDInterface, "vendor": r.VendorInterface}
		out[r.UUID] = nodeRow{Driver: r.Driver, Version: *r.Version, Columns: cols}
	}
	return out
}

func strs(m map[string]*string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

// Rows a 0.1 service wrote (Node 1.0, no interfaces) get their hardware
// type's defaults and version 1.1 in budgeted batches, with dbsync's exit
// semantics; defaults come from live conductors before Rivet's built-in
// knowledge; an unknown hardware type is skipped and reported, and does
// not keep the run from finishing.
func TestBackfillNodeInterfaces(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		reg, tb := dbtest.Registry(t), dbtest.Releases(t)
		pin, _ := tb.ParsePin("0.1")
		s := db.NewStore(dbh, reg, release.NewPinner(tb, pin))
		drivers := []string{"fake-hardware", "fake-hardware", "ipmi", "redfish", "acme"}
		for i, hw := range drivers {
			obj, _ := reg.New("Node")
			n := obj.(*objects.Node)
			n.UUID, n.Driver = fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i), hw
			if err := s.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		// A live conductor with a boot server serves fake-hardware and ipmi.
		served := []catalog.Served{{HardwareType: "fake-hardware", Interfaces: []string{"power", "management", "deploy", "inspect"}},
			{HardwareType: "ipmi", Interfaces: []string{"power", "management", "deploy"}}}
		cat := catalog.ForConductor(served, catalog.Options{BootServer: true})
		if _, err := dbh.RegisterConductor(ctx, db.ConductorRegistration{Hostname: "cond-1", Drivers: cat.HardwareTypes(),
			Version: "1.0", Interfaces: catalog.Rows(cat)}); err != nil {
			t.Fatal(err)
		}

		var out, notes bytes.Buffer
		r := &Registry{}
		m := BackfillNodeInterfaces(Options{Notes: &notes})
		if m.MinServiceVersion != 2 || tb.Head().ServiceVersion < m.MinServiceVersion {
			t.Fatalf("MinServiceVersion = %d, HEAD's service version %d", m.MinServiceVersion, tb.Head().ServiceVersion)
		}
		latest, err := UpdateToLatestVersions(reg, tb.Head(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, mg := range []Migration{m, latest} {
			if err := r.Register(mg); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := m.Pending(ctx, dbh); err != nil || n != 4 {
			t.Fatalf("pending = %d, %v; want 4 (acme is not to do)", n, err)
		}
		run := &Runner{DB: dbh, Registry: r, Report: LineReporter{W: &out}}
		// Node 1.2 (release 0.3) is newer than what the backfill writes
		// (1.1): update_to_latest_versions then brings every row there.
		for i, want := range []bool{false, false, false, false, true} {
			finished, err := run.Run(ctx, 2, nil)
			if err != nil || finished != want {
				t.Fatalf("run %d: finished=%v err=%v, want finished=%v", i+1, finished, err, want)
			}
		}
		wantOut := "backfill_node_interfaces() migrated 2 of 4 objects.\n" +
			"backfill_node_interfaces() migrated 2 of 2 objects.\n" +
			"backfill_node_interfaces() migrated 0 of 0 objects.\n" +
			"update_to_latest_versions() migrated 2 of 5 objects.\n" +
			"backfill_node_interfaces() migrated 0 of 0 objects.\n" +
			"update_to_latest_versions() migrated 2 of 3 objects.\n" +
			"backfill_node_interfaces() migrated 0 of 0 objects.\n" +
			"update_to_latest_versions() migrated 1 of 1 objects.\n"
		if out.String() != wantOut {
			t.Fatalf("output:\n%s\nwant:\n%s", out.String(), wantOut)
		}
		if !strings.Contains(notes.String(), "backfill_node_interfaces: skipped 1 node(s) of hardware type(s) acme") {
			t.Fatalf("notes: %q", notes.String())
		}

		common := map[string]string{"console": "no-console", "network": "noop", "raid": "no-raid", "vendor": "no-vendor"}
		with := func(m map[string]string) map[string]string {
			for k, v := range common {
				m[k] = v
			}
			return m
		}
		want := map[string]map[string]string{
			"fake-hardware": with(map[string]string{"boot": "fake", "deploy": "fake", "inspect": "fake", "management": "fake", "power": "fake"}),
			// The live conductor's boot server wins over the built-in pxe.
			"ipmi": with(map[string]string{"boot": "ipxe", "deploy": "ramdisk", "inspect": "no-inspect", "management": "ipmitool", "power": "ipmitool"}),
			// No conductor serves redfish: Rivet's built-in knowledge.
			"redfish": with(map[string]string{"boot": "redfish-virtual-media", "deploy": "ramdisk", "inspect": "redfish",
				"management": "redfish", "power": "redfish"}),
			"acme": {},
		}
		for uuid, row := range readNodes(t, dbh) {
			if latest := tb.Head().Objects["Node"][0].String(); row.Version != latest {
				t.Errorf("%s (%s) left at version %s, want %s", uuid, row.Driver, row.Version, latest)
			}
			if diff := cmp.Diff(want[row.Driver], strs(row.Columns)); diff != "" {
				t.Errorf("%s (%s) interfaces (-want +got):\n%s", uuid, row.Driver, diff)
			}
		}
		// Rows read back through the versioned core hold the backfill.
		n, err := db.NewStore(dbh, reg, release.NewPinner(tb, release.Pin{})).GetNode(ctx, "00000000-0000-0000-0000-000000000002")
		if err != nil || n.BootInterface == nil || *n.BootInterface != "ipxe" {
			t.Fatalf("ipmi node through the store: %v", err)
		}

		// A live 0.1 service (service version 1) blocks the migration.
		if _, err := dbh.RegisterService(ctx, db.ServiceRegistration{Hostname: "old", Binary: db.BinaryAPI, Release: "0.1.0", ServiceVersion: 1}); err != nil {
			t.Fatal(err)
		}
		var tooOld *NotReadyError
		if _, err := run.Run(ctx, 0, nil); !errors.Is(err, ErrRefused) || !errors.As(err, &tooOld) || tooOld.Migrations[0] != BackfillNodeInterfacesName {
			t.Fatalf("with a 0.1 service live: %v", err)
		}
	})
}

// The backfill walks the table in chunks: with chunks of 2, a --max-count
// of 3 stops mid-chunk and a run without it finishes; a row already at 1.1
// with its own interfaces, between rows to do, keeps them.
func TestBackfillNodeInterfacesInChunks(t *testing.T) {
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		reg, tb := dbtest.Registry(t), dbtest.Releases(t)
		pin, _ := tb.ParsePin("0.1")
		old, head := db.NewStore(dbh, reg, release.NewPinner(tb, pin)), db.NewStore(dbh, reg, release.NewPinner(tb, release.Pin{}))
		const kept = "00000000-0000-0000-0000-000000000002" // an ipmi node
		for i := range 8 {
			obj, _ := reg.New("Node")
			n := obj.(*objects.Node)
			n.UUID, n.Driver = fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i), []string{"ipmi", "fake-hardware"}[i%2]
			s := old
			if n.UUID == kept {
				s = head
				for _, p := range []**string{&n.BootInterface, &n.ConsoleInterface, &n.DeployInterface, &n.InspectInterface,
					&n.ManagementInterface, &n.NetworkInterface, &n.PowerInterface, &n.RAIDInterface, &n.VendorInterface} {
					v := "fake"
					*p = &v
				}
			}
			if err := s.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		r := &Registry{}
		if err := r.Register(BackfillNodeInterfaces(Options{ChunkSize: 2})); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		run := &Runner{DB: dbh, Registry: r, Report: LineReporter{W: &out}}
		if finished, err := run.Run(ctx, 3, nil); err != nil || finished {
			t.Fatalf("--max-count 3: finished=%v err=%v", finished, err)
		}
		// A bad workers option is the caller's mistake, named, and changes nothing.
		for _, bad := range []string{"0", "x", "17"} {
			opts, err := ParseOptions([]string{"backfill_node_interfaces.workers=" + bad}, r)
			if err != nil {
				t.Fatal(err)
			}
			quiet := &Runner{DB: dbh, Registry: r}
			if _, err := quiet.Run(ctx, 0, opts); !errors.Is(err, ErrBadArguments) || !strings.Contains(err.Error(), "workers="+bad) {
				t.Fatalf("workers=%s: %v", bad, err)
			}
		}
		opts, err := ParseOptions([]string{"backfill_node_interfaces.workers=3"}, r)
		if err != nil {
			t.Fatal(err)
		}
		if finished, err := run.Run(ctx, 0, opts); err != nil || !finished {
			t.Fatalf("without --max-count: finished=%v err=%v", finished, err)
		}
		want := "backfill_node_interfaces() migrated 3 of 7 objects.\n" +
			fmt.Sprintf("Running batches of %d until migrations have been completed.\n", BatchSize) +
			"backfill_node_interfaces() migrated 4 of 4 objects.\n"
		if out.String() != want {
			t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
		}
		for uuid, row := range readNodes(t, dbh) {
			cols := strs(row.Columns)
			wantV := "1.1" // what the backfill writes
			if uuid == kept {
				wantV = tb.Head().Objects["Node"][0].String() // written by HEAD
			}
			if row.Version != wantV || len(cols) != 9 {
				t.Errorf("%s (%s): version %s, interfaces %v", uuid, row.Driver, row.Version, cols)
			}
			if (uuid == kept) != (row.Driver == "ipmi" && cols["power"] == "fake") {
				t.Errorf("%s (%s): interfaces %v", uuid, row.Driver, cols)
			}
		}
	})
}

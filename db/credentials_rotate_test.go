package db_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/keyring"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// seedSealedNodes inserts n node rows whose driver_info password is sealed
// with old (every third one is plaintext, as stored before a key existed).
func seedSealedNodes(t *testing.T, dbh *db.DB, version string, old *keyring.Keyring, n int) []string {
	t.Helper()
	uuids := make([]string, n)
	const chunk = 500
	for start := 0; start < n; start += chunk {
		var rows []db.Node
		for i := start; i < min(start+chunk, n); i++ {
			uuids[i] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			pw := any(fmt.Sprintf("%s-%d", credPassword, i))
			if i%3 != 0 {
				env, err := old.Seal([]byte(fmt.Sprintf("%q", pw)))
				if err != nil {
					t.Fatal(err)
				}
				pw = env
			}
			v := version
			rows = append(rows, db.Node{UUID: uuids[i], Driver: "redfish", Version: &v,
				DriverInfo: db.JSONObject{"redfish_address": "https://10.0.0.1", "redfish_password": pw}})
		}
		if _, err := dbh.Bun().NewInsert().Model(&rows).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return uuids
}

// TestRotateCredentialsOnline rotates 10,000 nodes from key "old" to key
// "new" while writers keep saving new passwords through the Store: every
// acknowledged write survives, every secret ends sealed with "new", and a
// second run has nothing to do.
func TestRotateCredentialsOnline(t *testing.T) {
	nodes := 10000
	if testing.Short() {
		nodes = 1000
	}
	dbtest.ForEachDialect(t, func(t *testing.T, d db.Dialect) {
		ctx := context.Background()
		dbh := dbtest.Open(t, d)
		plain, reg := latestStore(t, dbh)
		latest, _ := reg.Latest("Node")
		uuids := seedSealedNodes(t, dbh, latest.String(), testKeys(t, "old"), nodes)
		both := testKeys(t, "new", "old")
		s := plain.WithKeyring(both)

		// Writers: each owns every 8th of the first 400 nodes and records
		// the last password it saved.
		const writers = 4
		stop := make(chan struct{})
		var wg sync.WaitGroup
		last := make([]map[string]string, writers)
		errs := make(chan error, writers)
		for w := range writers {
			last[w] = map[string]string{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for round := 0; ; round++ {
					for i := w; i < 400; i += writers * 2 {
						select {
						case <-stop:
							return
						default:
						}
						n, err := s.GetNode(ctx, uuids[i])
						if err != nil {
							errs <- fmt.Errorf("writer %d: %w", w, err)
							return
						}
						pw := fmt.Sprintf("w%d-r%d-%s", w, round, credPassword)
						n.DriverInfo["redfish_password"] = pw
						if err := s.Save(ctx, n); err != nil {
							errs <- fmt.Errorf("writer %d: %w", w, err)
							return
						}
						last[w][uuids[i]] = pw
					}
				}
			}()
		}

		var reports int
		start := time.Now()
		p, err := dbh.RotateCredentials(ctx, both, 100, func(db.RotateProgress) { reports++ })
		elapsed := time.Since(start)
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: rotate-key over %d nodes took %v (%d rewritten, %d retried after a concurrent write)",
			d, nodes, elapsed.Round(time.Millisecond), p.Rewritten, p.Raced)
		if p.Total != nodes || p.Scanned != nodes || reports != nodes/100 {
			t.Errorf("progress = %+v after %d reports, want %d nodes in batches of 100", p, reports, nodes)
		}

		// No lost write: each writer's last password is what reads back.
		for w := range writers {
			for uuid, pw := range last[w] {
				n, err := s.GetNode(ctx, uuid)
				if err != nil {
					t.Fatal(err)
				}
				if n.DriverInfo["redfish_password"] != pw {
					t.Errorf("node %s: password %v, want the acknowledged %s", uuid, n.DriverInfo["redfish_password"], pw)
				}
			}
		}
		// Everything is sealed with "new"; untouched passwords survived.
		var raws []string
		if err := dbh.Bun().NewSelect().Table(db.TableNodes).Column("driver_info").Scan(ctx, &raws); err != nil {
			t.Fatal(err)
		}
		for _, raw := range raws {
			if strings.Contains(raw, credPassword) || strings.Count(raw, keyring.Prefix+"new:") != 1 {
				t.Fatalf("not sealed with the new key: %s", raw)
			}
		}
		newOnly := plain.WithKeyring(testKeys(t, "new"))
		for _, i := range []int{nodes - 1, nodes - 2, nodes - 3} {
			n, err := newOnly.GetNode(ctx, uuids[i])
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("%s-%d", credPassword, i); n.DriverInfo["redfish_password"] != want {
				t.Errorf("node %d: password %v, want %s", i, n.DriverInfo["redfish_password"], want)
			}
		}

		again, err := dbh.RotateCredentials(ctx, both, 0, nil)
		if err != nil || again.Rewritten != 0 {
			t.Errorf("second run = %+v, %v; want nothing rewritten", again, err)
		}
	})
}

// TestRotateCredentialsRefuses: no key, or a value sealed with a key that
// is not in the file, stops the rotation with an error naming the key id.
func TestRotateCredentialsRefuses(t *testing.T) {
	ctx := context.Background()
	dbh := dbtest.Open(t, db.SQLite)
	_, reg := latestStore(t, dbh)
	latest, _ := reg.Latest("Node")
	seedSealedNodes(t, dbh, latest.String(), testKeys(t, "lost"), 3)
	if _, err := dbh.RotateCredentials(ctx, nil, 0, nil); err == nil {
		t.Error("rotation without a key succeeded")
	}
	_, err := dbh.RotateCredentials(ctx, testKeys(t, "new"), 0, nil)
	if !db.IsUnknownKey(err) || !strings.Contains(err.Error(), `"lost"`) {
		t.Errorf("err = %v, want an unknown key error naming \"lost\"", err)
	}
	if err != nil && strings.Contains(err.Error(), credPassword) {
		t.Errorf("error leaks a password: %v", err)
	}
}

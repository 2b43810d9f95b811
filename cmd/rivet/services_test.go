package main

import (
	"log/slog"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/config"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/db"
)

// A pin reloaded by SIGHUP reaches the API's services row at the next
// heartbeat, as a conductor's does: `rivet upgrade status` shows it and
// `rivet upgrade check` stops warning about a pin the operator removed.
func TestAPIRecordsAReloadedPin(t *testing.T) {
	conf, dbh := finalizeEnv(t)
	cfg, err := config.Load([]string{conf}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Default.ServiceHeartbeatInterval = 20 * time.Millisecond
	table := release.Default()
	pin, err := table.ParsePin("0.1")
	if err != nil {
		t.Fatal(err)
	}
	pinner := release.NewPinner(table, pin)
	log := slog.New(slog.DiscardHandler)
	guard := newGuard(dbh, cfg, "rivet-api", log, db.BinaryAPI)
	stop, err := registerAPI(t.Context(), guard, cfg, pinner, log, func(error) {})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	rowPin := func() string {
		live, err := dbh.LiveServices(t.Context(), time.Minute)
		if err != nil || len(live) != 1 {
			t.Fatalf("live services: %+v, %v", live, err)
		}
		if live[0].Pin == nil {
			return ""
		}
		return *live[0].Pin
	}
	if got := rowPin(); got != pin.String() {
		t.Fatalf("services row pin %q at start, want %q", got, pin.String())
	}
	// What the SIGHUP reloader does with an emptied pin_release_version.
	if _, err := guard.Apply(t.Context(), pinner, release.Pin{Mode: release.PinLatest}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for rowPin() != "" {
		if time.Now().After(deadline) {
			t.Fatalf("services row still shows pin %q after the reload", rowPin())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

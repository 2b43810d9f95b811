package upgrade

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"testing"
)

// TestRollback goes back before finalizing, under load: one conductor and
// one API are upgraded (pinned), then the old release is put back on them
// (APIs first, the reverse order), with nothing lost and every row still
// at the old release's versions. Then the whole fleet is upgraded and
// unpinned, which finalizes the new release: an old service must now
// refuse to start, naming both releases.
func TestRollback(t *testing.T) {
	requireUpgrade(t)
	r := newRun(t, scenario{name: "rollback", dialect: "postgresql", mode: manualPins})
	d, old, cur := r.d, r.old, r.cur
	r.step("0", r.dbsyncUpgrade)
	r.step("1.1", func() { d.conductors[0].replace(cur, r.newPin()) })
	r.step("2.1", func() { d.apis[0].replace(cur, r.newPin()) })
	r.step("back 2.1", func() { d.apis[0].replace(old, "") })
	r.step("back 1.1", func() { d.conductors[0].replace(old, "") })
	// Everything written so far, by old and pinned services alike, is at
	// the old release's versions: what makes going back safe.
	r.checkObjectVersions(old.info.Objects)
	r.upgradeServices()
	r.step("old refused", r.oldRefused)
	r.finish()
}

// oldRefused starts an old conductor and an old API beside the finalized
// fleet: each must exit non-zero at once, naming its release and the
// finalized one, and leave no process behind.
func (r *run) oldRefused() {
	t := r.t
	t.Helper()
	if r.old.info.ServiceVersion == r.cur.info.ServiceVersion {
		t.Logf("old and new share service version %d: nothing to refuse", r.cur.info.ServiceVersion)
		return
	}
	for _, kind := range []string{"conductor", "api"} {
		s := &service{d: r.d, kind: kind, name: "old-" + kind, host: "127.0.0.1", port: freePort(t), b: r.old}
		if kind == "api" {
			s.host = s.name
		}
		s.registered = s.host
		if kind == "conductor" {
			s.registered += ":" + strconv.Itoa(s.port)
		}
		s.writeConfig()
		p := startProc(t, r.d.logDir, fmt.Sprintf("%s (%s, %s)", s.name, s.b.label, s.b.info.Release), s.b.bin("rivet"), "--config-file", s.conf, kind)
		r.d.procs = append(r.d.procs, p)
		var kids []procID
		deadline := time.Now().Add(30 * time.Second)
		for !p.exited() && time.Now().Before(deadline) {
			now, _ := children(p.pid())
			for _, k := range now {
				if !slices.Contains(kids, k) {
					kids = append(kids, k)
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !p.exited() {
			p.kill()
			t.Fatalf("an old %s started beside the finalized fleet and was still running after 30s:\n%s", kind, tail(p.log.String(), 20))
		}
		out := p.log.String()
		if p.err == nil || !strings.Contains(out, r.old.info.Release) || !strings.Contains(out, r.cur.info.Release) {
			t.Fatalf("an old %s beside the finalized fleet: exit %v, want non-zero with a message naming releases %s and %s:\n%s",
				kind, p.err, r.old.info.Release, r.cur.info.Release, tail(out, 20))
		}
		t.Logf("old %s refused: %v: %s", kind, p.err, lastLine(out))
		waitFor(t, 5*time.Second, "the refused "+kind+"'s plugin processes gone", func() bool {
			return !slices.ContainsFunc(kids, procID.alive)
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

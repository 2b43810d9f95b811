package upgrade

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rivetmetal/rivet/core/release"
)

// The scenario tests below (the chain, a skipped release, the gaps) run
// small deployments of real binaries without HAProxy or load: services are
// added one at a time, each with its own build and pin.

// newMini is a deployment whose schema the release of build b created.
func newMini(t *testing.T, b, cur *build) *deployment {
	t.Helper()
	d := newDeployment(t, "postgresql", false, b, cur)
	d.rivet(b, "dbsync", "create-schema").ok(t)
	return d
}

// add starts a service of kind ("api" or "conductor") with build b and pin.
func (d *deployment) add(kind string, b *build, pin string) *service {
	t := d.t
	t.Helper()
	s := d.newService(kind, b, pin)
	s.start()
	return s
}

// newService places a service of kind in the deployment without starting it.
func (d *deployment) newService(kind string, b *build, pin string) *service {
	t := d.t
	n := len(d.conductors) + 1
	if kind == "api" {
		n = len(d.apis) + 1
	}
	s := &service{d: d, kind: kind, name: fmt.Sprintf("%s-%d", kind, n), host: "127.0.0.1", port: freePort(t), b: b, pin: pin}
	if kind == "api" {
		s.host, s.registered = s.name, s.name
		d.apis = append(d.apis, s)
	} else {
		s.registered = s.host + ":" + strconv.Itoa(s.port)
		d.conductors = append(d.conductors, s)
	}
	return s
}

// startRefused starts s and reports whether it exited by itself within
// limit (a refusal) with its output; a service still running is left
// running.
func (s *service) startRefused(limit time.Duration) (refused bool, out string) {
	t := s.d.t
	t.Helper()
	s.writeConfig()
	s.p = startProc(t, s.d.logDir, fmt.Sprintf("%s (%s, %s)", s.name, s.b.label, s.b.info.Release), s.b.bin("rivet"), "--config-file", s.conf, s.kind)
	s.d.procs = append(s.d.procs, s.p)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if s.p.exited() {
			return true, s.p.log.String()
		}
		if s.kind == "api" && httpStatus(s.url()+"/") == 200 {
			return false, s.p.log.String()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false, s.p.log.String()
}

// stopAllMini stops every running service gracefully (each must exit 0).
func (d *deployment) stopAllMini() {
	for _, s := range append(d.apis, d.conductors...) {
		if s.p != nil && !s.p.exited() {
			s.stop()
		}
	}
}

// gapBuilds returns the builds of the plan's newest upgrade that raises the
// service version, or skips with the plan's reason.
func gapBuilds(t *testing.T) (old, cur *build, pin string) {
	t.Helper()
	requireUpgrade(t)
	p := defaultPlan(t)
	if p.gapFrom == "" {
		t.Skip(p.gapWhy)
	}
	old, cur = releaseBuild(t, p.gapFrom), releaseBuild(t, p.gapTo)
	t.Logf("gap scenario: %s (release %s) → %s (release %s)", p.gapFrom, old.info.Release, p.gapTo, cur.info.Release)
	return old, cur, p.gapFrom
}

// TestUpgradeChain upgrades from the oldest cut release through every
// later one to HEAD, in sequence, under load (manual pinning on
// PostgreSQL), each hop the full step table. With one cut release the
// chain is the newest release → HEAD, which TestRollingUpgrade runs.
func TestUpgradeChain(t *testing.T) {
	requireUpgrade(t)
	p := defaultPlan(t)
	if env := os.Getenv("RIVET_UPGRADE_CHAIN"); env != "" {
		// To try the chain machinery before a second release is cut, e.g.
		// RIVET_UPGRADE_CHAIN=0.1,HEAD,HEAD (an upgrade HEAD → HEAD last).
		p.chain = strings.Split(env, ",")
		t.Logf("chain from RIVET_UPGRADE_CHAIN: %s", strings.Join(p.chain, " → "))
	} else if len(p.chain) <= 2 {
		t.Skipf("the chain %s is the newest release → HEAD, which TestRollingUpgrade runs: it needs two cut releases",
			strings.Join(p.chain, " → "))
	}
	var bs []*build
	for _, key := range p.chain {
		bs = append(bs, releaseBuild(t, key))
	}
	r := newRunOf(t, scenario{name: "chain", dialect: "postgresql", mode: manualPins}, bs[0], bs[1])
	for i := 1; i < len(bs); i++ {
		if i > 1 {
			r.nextHop(bs[i])
		}
		r.prefix = p.chain[i] + " "
		r.t.Logf("hop %s → %s", p.chain[i-1], p.chain[i])
		r.upgrade()
	}
	r.finish()
}

// nextHop makes the run's new release the old one and b the new one: the
// fleet, unpinned and migrated, is upgraded again.
func (r *run) nextHop(b *build) {
	r.old, r.cur = r.cur, b
	r.d.old, r.d.cur = r.old, r.cur
	r.oldPin = pinFor(r.old)
	r.oldMax, r.newMax = r.newMax, mustVersion(b.info.APIMax)
	r.finalSV = 0
	r.l.choices.Store(nil)
	if r.oldPin == "" && r.old.info.ServiceVersion != r.cur.info.ServiceVersion {
		r.t.Fatalf("the release table has no release with service version %d", r.old.info.ServiceVersion)
	}
}

// TestSkipReleaseRefused starts a fleet at a cut release two or more
// service-version steps behind HEAD, then HEAD beside it: HEAD's services
// must refuse to start ("upgrade one release at a time") and `rivet
// upgrade check` must fail. It needs two cut releases.
func TestSkipReleaseRefused(t *testing.T) {
	requireUpgrade(t)
	p := defaultPlan(t)
	if p.skipFrom == "" {
		t.Skip(p.skipWhy)
	}
	old, cur := releaseBuild(t, p.skipFrom), releaseBuild(t, release.HeadKey)
	d := newMini(t, old, cur)
	d.add("conductor", old, "")
	d.add("api", old, "")
	res := d.rivet(cur, "upgrade", "check", "--json")
	if res.code != 2 || checkResult(t, res, "Service versions") != "Failure" {
		t.Errorf("HEAD's upgrade check beside %s: exit %d, Service versions %s; want Failure, exit 2\n%s",
			old.info.Release, res.code, checkResult(t, res, "Service versions"), res.stdout)
	}
	dbsync := d.rivet(cur, "dbsync", "upgrade")
	t.Logf("HEAD's dbsync upgrade beside %s: exit %d %s", old.info.Release, dbsync.code, lastLine(dbsync.stderr+dbsync.stdout))
	for _, kind := range []string{"conductor", "api"} {
		for _, pin := range []string{"", "auto", p.skipFrom} {
			s := d.newService(kind, cur, pin)
			refused, out := s.startRefused(30 * time.Second)
			if !refused {
				s.stop()
				t.Errorf("HEAD's %s with pin %q started beside %s, want a refusal", kind, pin, old.info.Release)
				continue
			}
			// A pin HEAD no longer supports may be refused as a bad option.
			if !strings.Contains(out, "one release at a time") && (pin == "" || pin == "auto" || !strings.Contains(out, "pin_release_version")) {
				t.Errorf("HEAD's %s with pin %q beside %s: exit %v, want a message saying to upgrade one release at a time:\n%s",
					kind, pin, old.info.Release, s.p.err, tail(out, 10))
			}
		}
	}
	d.stopAllMini()
}

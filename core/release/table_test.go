package release

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/version"
)

func objs(kv ...string) map[string][]version.Version {
	m := map[string][]version.Version{}
	for i := 0; i < len(kv); i += 2 {
		for _, s := range strings.Split(kv[i+1], ",") {
			m[kv[i]] = append(m[kv[i]], version.MustParse(s))
		}
	}
	return m
}

// testTable is a two-release table for tests: 0.1 "anvil", 0.2 "bellows", HEAD.
func testTable(t *testing.T) *Table {
	t.Helper()
	tb, err := NewTable(
		Entry{Version: HeadKey, API: v("1.31"), RPC: v("1.2"), Objects: objs("Node", "1.2,1.1", "Port", "1.0"), ServiceVersion: 3},
		Entry{Version: "0.1", Name: "anvil", API: v("1.26"), RPC: v("1.0"), Objects: objs("Node", "1.0", "Port", "1.0"), ServiceVersion: 1},
		Entry{Version: "0.2", Name: "bellows", API: v("1.31"), RPC: v("1.1"), Objects: objs("Node", "1.1,1.0", "Port", "1.0"), ServiceVersion: 2},
	)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestDefaultTableValid(t *testing.T) {
	tb := Default()
	if !tb.Head().IsHead() {
		t.Fatal("default head is not HEAD")
	}
	for _, e := range tb.All() {
		if e.ServiceVersion < 1 {
			t.Errorf("%s: service version %d < 1", e.Label(), e.ServiceVersion)
		}
	}
}

func TestNewTableRejects(t *testing.T) {
	good := func() Entry {
		return Entry{Version: "0.1", Name: "anvil", API: v("1.26"), RPC: v("1.0"), Objects: objs("Node", "1.0"), ServiceVersion: 1}
	}
	head := func() Entry {
		return Entry{Version: HeadKey, API: v("1.26"), RPC: v("1.0"), Objects: objs("Node", "1.1,1.0"), ServiceVersion: 1}
	}
	tests := map[string]struct {
		mutHead func(*Entry)
		mutRel  func(*Entry)
		want    string
	}{
		"gap in object versions":   {mutHead: func(e *Entry) { e.Objects = objs("Node", "1.2") }, want: "not contiguous: 1.0 then 1.2"},
		"objects not newest first": {mutHead: func(e *Entry) { e.Objects = objs("Node", "1.0,1.1") }, want: "not newest first"},
		"API goes back":            {mutHead: func(e *Entry) { e.API = v("1.25") }, want: "API 1.25 is older"},
		"RPC goes back":            {mutRel: func(e *Entry) { e.RPC = v("1.5") }, want: "RPC 1.0 is older"},
		"service version back":     {mutRel: func(e *Entry) { e.ServiceVersion = 4 }, want: "service version 1 is below"},
		"drops a kind":             {mutHead: func(e *Entry) { e.Objects = objs("Port", "1.0") }, want: "drops object Node"},
		"bad key":                  {mutRel: func(e *Entry) { e.Version = "0.1.0" }, want: "not MAJOR.MINOR"},
		"no name":                  {mutRel: func(e *Entry) { e.Name = "" }, want: "has no name"},
		"name clashes with auto":   {mutRel: func(e *Entry) { e.Name = "Auto" }, want: `"Auto" of 0.1 is already used`},
		"empty object list":        {mutHead: func(e *Entry) { e.Objects = objs("Node", "1.0"); e.Objects["Port"] = nil }, want: "lists no version for Port"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h, r := head(), good()
			if tc.mutHead != nil {
				tc.mutHead(&h)
			}
			if tc.mutRel != nil {
				tc.mutRel(&r)
			}
			_, err := NewTable(h, r)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewTable error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, err := NewTable(head(), good()); err != nil {
		t.Fatalf("baseline table rejected: %v", err)
	}
	if _, err := NewTable(good()); err == nil {
		t.Fatal("a head entry that is not HEAD was accepted")
	}
}

func TestParsePin(t *testing.T) {
	tb := testTable(t)
	tests := map[string]struct {
		in      string
		mode    PinMode
		release string
		wantErr bool
	}{
		"empty is latest":   {in: "", mode: PinLatest},
		"blank is latest":   {in: "  ", mode: PinLatest},
		"auto":              {in: "auto", mode: PinAuto},
		"AUTO":              {in: "AUTO", mode: PinAuto},
		"semver":            {in: "0.1", mode: PinRelease, release: "0.1"},
		"name":              {in: "anvil", mode: PinRelease, release: "0.1"},
		"name any case":     {in: "Bellows", mode: PinRelease, release: "0.2"},
		"HEAD is not a pin": {in: "HEAD", wantErr: true},
		"unknown":           {in: "0.9", wantErr: true},
		"garbage":           {in: "spam", wantErr: true},
		// Every spelling `rivet version` prints for a cut release or
		// one of its point releases, and a git tag's.
		"cut release string":        {in: "0.1.0", mode: PinRelease, release: "0.1"},
		"point release string":      {in: "0.1.1", mode: PinRelease, release: "0.1"},
		"later point release":       {in: "0.2.13", mode: PinRelease, release: "0.2"},
		"tag spelling":              {in: "v0.1.1", mode: PinRelease, release: "0.1"},
		"tag spelling of a key":     {in: "v0.2", mode: PinRelease, release: "0.2"},
		"padded":                    {in: " 0.1.1 ", mode: PinRelease, release: "0.1"},
		"point of an uncut release": {in: "0.3.0", wantErr: true},
		"development build":         {in: "0.2.0.dev", wantErr: true},
		"development build of HEAD": {in: "0.3.0.dev", wantErr: true},
		"leading zero":              {in: "0.01.1", wantErr: true},
		"negative patch":            {in: "0.1.-1", wantErr: true},
		"four components":           {in: "0.1.1.1", wantErr: true},
		"trailing dot":              {in: "0.1.", wantErr: true},
		"only a v":                  {in: "v", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := tb.ParsePin(tc.in)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("ParsePin(%q) = %+v, want error", tc.in, p)
				}
				for _, want := range []string{"auto", "0.1", "anvil", "0.2", "bellows", `"" (latest)`} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not list valid value %s", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Mode != tc.mode || p.Release.Version != tc.release {
				t.Fatalf("ParsePin(%q) = mode %d release %q", tc.in, p.Mode, p.Release.Version)
			}
		})
	}
	for in, want := range map[string]string{
		"0.2.0.dev": "0.2.0.dev is a development build",
		"0.3.0":     "release 0.3 was never cut",
		"spam":      "or a point release of one (e.g. 0.2.0)",
	} {
		if _, err := tb.ParsePin(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePin(%q) error %v, want it to say %q", in, err, want)
		}
	}
	// A point-release pin is the release's pin: it registers and reloads
	// as the key.
	point, _ := tb.ParsePin("0.1.1")
	if point.String() != "0.1" {
		t.Errorf("pin 0.1.1 renders as %q, want 0.1", point.String())
	}
	named, _ := tb.ParsePin("anvil")
	semver, _ := tb.ParsePin("0.1")
	if diff := cmp.Diff(named, semver); diff != "" {
		t.Fatalf("named and semver pins differ (-named +semver):\n%s", diff)
	}
}

func TestResolve(t *testing.T) {
	tb := testTable(t)
	pin := func(s string) Pin {
		p, err := tb.ParsePin(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := map[string]struct {
		pin  Pin
		live []int
		want string
	}{
		"latest":                 {pin: pin(""), want: HeadKey},
		"latest ignores live":    {pin: pin(""), live: []int{1}, want: HeadKey},
		"release":                {pin: pin("anvil"), want: "0.1"},
		"auto alone":             {pin: pin("auto"), want: HeadKey},
		"auto all head":          {pin: pin("auto"), live: []int{3, 3}, want: HeadKey},
		"auto one old":           {pin: pin("auto"), live: []int{3, 1, 2}, want: "0.1"},
		"auto middle":            {pin: pin("auto"), live: []int{3, 2}, want: "0.2"},
		"auto dev build between": {pin: pin("auto"), live: []int{3, 2}, want: "0.2"},
		"auto older than table":  {pin: pin("auto"), live: []int{0}, want: "0.1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tb.Resolve(tc.pin, tc.live).Version; got != tc.want {
				t.Fatalf("Resolve = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSupportedObjectVersions(t *testing.T) {
	got := testTable(t).SupportedObjectVersions()
	want := objs("Node", "1.0,1.1,1.2", "Port", "1.0")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestPinner(t *testing.T) {
	tb := testTable(t)
	p, _ := tb.ParsePin("0.1")
	pn := NewPinner(tb, p)
	if pn.Effective().Version != "0.1" {
		t.Fatalf("effective = %s", pn.Effective().Version)
	}
	if got := pn.Set(Pin{Mode: PinLatest}, nil); got.Version != HeadKey || pn.Effective().Version != HeadKey {
		t.Fatalf("after unpin effective = %s", pn.Effective().Version)
	}
	if pn.Pin().String() != "" {
		t.Fatalf("pin string = %q", pn.Pin().String())
	}
}

func TestObjectVersion(t *testing.T) {
	e := testTable(t).Head()
	if got, ok := e.ObjectVersion("Node"); !ok || got != v("1.2") {
		t.Fatalf("Node = %v %v", got, ok)
	}
	if _, ok := e.ObjectVersion("Nope"); ok {
		t.Fatal("unknown kind reported")
	}
}

// Every cut release records the commit it was cut from, so upgrade tests can
// build its exact code (test/testenv.BuildRelease).
func TestReleasesRecordTheirCommit(t *testing.T) {
	for _, e := range Default().Releases() {
		if len(e.Commit) != 40 || strings.Trim(e.Commit, "0123456789abcdef") != "" {
			t.Errorf("release %s: Commit = %q, want the 40-hex-digit id of the commit it was cut from", e.Label(), e.Commit)
		}
		if e.Point != "" {
			patch, ok := strings.CutPrefix(e.Point, e.Version+".")
			if !ok || patch == "" || strings.Trim(patch, "0123456789") != "" {
				t.Errorf("release %s: Point = %q, want %s.Z (the point release Commit names)", e.Label(), e.Point, e.Version)
			}
		}
	}
}

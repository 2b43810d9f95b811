package release

import "testing"

func TestCovers(t *testing.T) {
	tb := testTable(t) // 0.1 "anvil", 0.2 "bellows", HEAD
	all := tb.All()
	for i, a := range all {
		for j, b := range all {
			if got, want := a.Covers(b), i >= j; got != want {
				t.Errorf("%s.Covers(%s) = %v, want %v", a.Label(), b.Label(), got, want)
			}
		}
	}
	head := tb.Head()
	for name, mut := range map[string]func(e *Entry){
		"older API":           func(e *Entry) { e.API = v("1.30") },
		"older RPC":           func(e *Entry) { e.RPC = v("1.1") },
		"older object":        func(e *Entry) { e.Objects = objs("Node", "1.1,1.0", "Port", "1.0") },
		"lacks an object":     func(e *Entry) { e.Objects = objs("Node", "1.2,1.1") },
		"same versions, else": func(e *Entry) { e.Version, e.Name = "0.3", "crucible" },
	} {
		e := head
		e.Objects = objs("Node", "1.2,1.1", "Port", "1.0")
		mut(&e)
		want := name == "same versions, else"
		if got := e.Covers(head); got != want {
			t.Errorf("%s: Covers(HEAD) = %v, want %v", name, got, want)
		}
	}
}

// PeerEffective reads what a live service uses from its registered pin and
// service version.
func TestPeerEffective(t *testing.T) {
	tb := testTable(t) // service versions: 0.1 → 1, 0.2 → 2, HEAD → 3
	tests := map[string]struct {
		peer Peer
		live []int
		want string
	}{
		"unpinned HEAD":              {peer: Peer{ServiceVersion: 3}, want: HeadKey},
		"unpinned 0.2 binary":        {peer: Peer{ServiceVersion: 2}, want: "0.2"},
		"unpinned newer binary":      {peer: Peer{ServiceVersion: 9}, want: HeadKey},
		"older than the table":       {peer: Peer{ServiceVersion: 0}, want: "0.1"},
		"pinned by key":              {peer: Peer{ServiceVersion: 3, Pin: "0.1"}, want: "0.1"},
		"pinned by name":             {peer: Peer{ServiceVersion: 3, Pin: "bellows"}, want: "0.2"},
		"pinned by a point release":  {peer: Peer{ServiceVersion: 3, Pin: "0.1.1"}, want: "0.1"},
		"pin above its own code":     {peer: Peer{ServiceVersion: 1, Pin: "0.2"}, want: "0.1"},
		"pin unknown here":           {peer: Peer{ServiceVersion: 3, Pin: "0.7"}, want: HeadKey},
		"auto, all HEAD":             {peer: Peer{ServiceVersion: 3, Pin: "auto"}, live: []int{3, 3}, want: HeadKey},
		"auto beside a 0.1 service":  {peer: Peer{ServiceVersion: 3, Pin: "auto"}, live: []int{3, 1}, want: "0.1"},
		"auto on a 0.2 binary alone": {peer: Peer{ServiceVersion: 2, Pin: "auto"}, live: []int{3}, want: "0.2"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tb.PeerEffective(tc.peer, tc.live); got.Version != tc.want {
				t.Fatalf("PeerEffective(%+v, %v) = %s, want %s", tc.peer, tc.live, got.Version, tc.want)
			}
		})
	}
}

func TestFloorAndOlder(t *testing.T) {
	tb := testTable(t)
	r01, _ := tb.Lookup("0.1")
	r02, _ := tb.Lookup("0.2")
	head := tb.Head()
	if got := tb.Older(head, r02); got.Version != "0.2" {
		t.Errorf("Older(HEAD, 0.2) = %s", got.Version)
	}
	if got := tb.Older(r01, r02); got.Version != "0.1" {
		t.Errorf("Older(0.1, 0.2) = %s", got.Version)
	}
	if _, _, ok := tb.Floor(nil, nil); ok {
		t.Error("Floor of no peers is ok")
	}
	peers := []Peer{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	p, at, ok := tb.Floor(peers, []Entry{head, r01, r02})
	if !ok || p.Name != "b" || at.Version != "0.1" {
		t.Errorf("Floor = %s at %s, %v; want b at 0.1", p.Name, at.Version, ok)
	}
}

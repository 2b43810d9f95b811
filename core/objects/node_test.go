package objects

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nodeInterfaceFields are Node 1.1's fields.
var nodeInterfaceFields = []string{"boot_interface", "console_interface", "deploy_interface", "inspect_interface",
	"management_interface", "power_interface", "raid_interface", "vendor_interface"}

// Node 1.1 adds the interface fields: 1.1 → 1.0 drops them on the wire and
// clears them for the DB; 1.0 → 1.1 leaves them unset.
func TestNode1_1InterfaceFields(t *testing.T) {
	r := testRegistry(t)
	node := func() *Node {
		n := loadedSample(r, "Node").(*Node)
		if n.DeployInterface == nil || n.BootInterface == nil {
			t.Fatal("the sample sets no interfaces")
		}
		return n
	}

	// RPC send to 1.0 (remove_unavailable_fields): not sent, not a change.
	p, err := r.Serialize(node(), v("1.0"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range nodeInterfaceFields {
		if _, ok := p.Data[f]; ok || slices.Contains(p.Changes, f) {
			t.Errorf("%s sent at 1.0", f)
		}
	}
	if string(p.Data["network_interface"]) != `"noop"` {
		t.Errorf("network_interface (1.0) not sent: %s", p.Data["network_interface"])
	}

	// DB write at 1.0: cleared and written, so the row holds NULL.
	out, changed, err := r.ForDB(node(), v("1.0"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range nodeInterfaceFields {
		if val, _ := r.Get(out, f); val.(*string) != nil || !slices.Contains(changed, f) {
			t.Errorf("%s written at 1.0 as %v (changed %v)", f, val, slices.Contains(changed, f))
		}
	}

	// DB read of a 1.0 row: unset, and marked so a later save writes 1.1.
	row := &Node{UUID: "u", Driver: "ipmi", Extra: map[string]any{}}
	if err := r.FromDB(row, v("1.0")); err != nil {
		t.Fatal(err)
	}
	if row.DeployInterface != nil || row.BootInterface != nil {
		t.Errorf("1.0 row read with interfaces: %v %v", row.DeployInterface, row.BootInterface)
	}
	ch := mustChanged(t, r, row)
	for _, f := range nodeInterfaceFields {
		if !slices.Contains(ch, f) {
			t.Errorf("%s not marked after the 1.0 → 1.1 conversion: %v", f, ch)
		}
	}

	// RPC receive of 1.0 on the client: unset, nothing changed.
	b, err := r.Encode(node(), v("1.0"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Decode(b, false)
	if err != nil {
		t.Fatal(err)
	}
	n := got.(*Node)
	if diff := cmp.Diff([]*string{nil, nil}, []*string{n.DeployInterface, n.VendorInterface}); diff != "" || len(mustChanged(t, r, n)) != 0 {
		t.Errorf("client decode of 1.0: %s, changed %v", diff, mustChanged(t, r, n))
	}
}

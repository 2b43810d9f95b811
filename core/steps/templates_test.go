package steps_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rivetmetal/rivet/core/objects"
	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/steps"
	"github.com/rivetmetal/rivet/db"
	"github.com/rivetmetal/rivet/db/dbtest"
)

// store returns a Store over a fresh SQLite database with one node
// (traits nodeTraits) and deploy templates.
func store(t *testing.T, nodeTraits []string, templates ...*objects.DeployTemplate) (*db.Store, *objects.Node) {
	t.Helper()
	reg := objects.NewRegistry()
	if err := objects.Install(reg); err != nil {
		t.Fatal(err)
	}
	s := db.NewStore(dbtest.Open(t, db.SQLite), reg, release.NewPinner(release.Default(), release.Pin{}))
	ctx := context.Background()
	obj, _ := reg.New("Node")
	n := obj.(*objects.Node)
	n.UUID, n.Driver = "70000000-0000-0000-0000-000000000001", "fake-hardware"
	if err := s.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := s.SetNodeTraits(ctx, n.ID, nodeTraits); err != nil {
		t.Fatal(err)
	}
	for i, tmpl := range templates {
		tmpl.UUID = "80000000-0000-0000-0000-00000000000" + string(rune('0'+i))
		if tmpl.Extra == nil {
			tmpl.Extra = map[string]any{}
		}
		if err := s.Create(ctx, tmpl); err != nil {
			t.Fatal(err)
		}
	}
	return s, n
}

func step(iface, name string, prio any) map[string]any {
	return map[string]any{"interface": iface, "step": name, "args": map[string]any{"k": iface}, "priority": prio}
}

// TestTemplateSteps: the templates whose names are among the instance
// traits contribute their steps, after the instance traits were checked
// against the node's, as Ironic's deploy does.
func TestTemplateSteps(t *testing.T) {
	hyper := &objects.DeployTemplate{Name: "CUSTOM_HYPERTHREADING_ON", Steps: []map[string]any{
		step("bios", "apply_configuration", json.Number("150")), step("deploy", "erase", json.Number("0"))}}
	raid := &objects.DeployTemplate{Name: "CUSTOM_RAID1", Steps: []map[string]any{step("raid", "create_configuration", json.Number("80"))}}
	other := &objects.DeployTemplate{Name: "CUSTOM_OTHER", Steps: []map[string]any{step("raid", "delete_configuration", json.Number("5"))}}
	s, n := store(t, []string{"CUSTOM_HYPERTHREADING_ON", "CUSTOM_RAID1", "CUSTOM_OTHER", "CUSTOM_UNUSED"}, hyper, raid, other)
	ctx := context.Background()

	for name, tc := range map[string]struct {
		traits    any
		templates []string
		steps     []steps.Step
		invalid   string
	}{
		"no instance traits": {traits: nil},
		"empty list":         {traits: []any{}},
		"one template": {traits: []any{"CUSTOM_RAID1"}, templates: []string{"CUSTOM_RAID1"},
			steps: []steps.Step{{Interface: "raid", Step: "create_configuration", Args: map[string]any{"k": "raid"}, Priority: 80}}},
		"two templates and a trait without one": {traits: []any{"CUSTOM_RAID1", "CUSTOM_UNUSED", "CUSTOM_HYPERTHREADING_ON"},
			templates: []string{"CUSTOM_HYPERTHREADING_ON", "CUSTOM_RAID1"},
			steps: []steps.Step{
				{Interface: "bios", Step: "apply_configuration", Args: map[string]any{"k": "bios"}, Priority: 150},
				{Interface: "deploy", Step: "erase", Args: map[string]any{"k": "deploy"}, Priority: 0},
				{Interface: "raid", Step: "create_configuration", Args: map[string]any{"k": "raid"}, Priority: 80}}},
		"not a node trait": {traits: []any{"CUSTOM_RAID1", "CUSTOM_GPU"},
			invalid: "Cannot specify instance traits that are not also set on the node. Node 70000000-0000-0000-0000-000000000001 is missing traits CUSTOM_GPU"},
		"not a list": {traits: "CUSTOM_RAID1",
			invalid: "Error parsing traits from Node 70000000-0000-0000-0000-000000000001 instance_info field. A list of strings is expected."},
		"not strings": {traits: []any{json.Number("1")},
			invalid: "Error parsing traits from Node 70000000-0000-0000-0000-000000000001 instance_info field. A list of strings is expected."},
	} {
		t.Run(name, func(t *testing.T) {
			n.InstanceInfo = map[string]any{}
			if tc.traits != nil {
				n.InstanceInfo["traits"] = tc.traits
			}
			got, err := steps.TemplateSteps(ctx, s, n)
			var inv *steps.InvalidError
			if tc.invalid != "" {
				if !errors.As(err, &inv) || inv.Msg != tc.invalid {
					t.Fatalf("error %v, want %q", err, tc.invalid)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(steps.Matched{Templates: tc.templates, Steps: tc.steps}, got); d != "" {
				t.Errorf("matched (-want +got):\n%s", d)
			}
		})
	}
}

// TestSort: priority first, then the interface's tie-break priority.
func TestSort(t *testing.T) {
	in := []steps.Step{{Interface: "raid", Step: "a", Priority: 10}, {Interface: "deploy", Step: "b", Priority: 100},
		{Interface: "bios", Step: "c", Priority: 10}, {Interface: "vendor", Step: "d", Priority: 10}}
	steps.Sort(in)
	var got []string
	for _, s := range in {
		got = append(got, s.Step)
	}
	if d := cmp.Diff([]string{"b", "d", "c", "a"}, got); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
}

func TestFromMap(t *testing.T) {
	st, err := steps.FromMap(map[string]any{"interface": "bios", "step": "x", "priority": "42"})
	if err != nil || st.Priority != 42 || st.Args == nil {
		t.Fatalf("%+v, %v", st, err)
	}
	if d := cmp.Diff(map[string]any{"interface": "bios", "step": "x", "args": map[string]any{}, "priority": 42}, st.Map()); d != "" {
		t.Errorf("Map (-want +got):\n%s", d)
	}
	if _, err := steps.FromMap(map[string]any{"interface": "bios", "priority": 1}); err == nil {
		t.Error("a step without a name was read")
	}
}

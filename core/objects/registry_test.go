package objects

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Structs with something wrong, for TestRegisterRejects.
type (
	widgetUntagged struct {
		Widget
		Size int
	}
	widgetWrongKind struct{ Widget }
	widgetBadNull   struct {
		Widget
		Color string `rivet:"color"`
	}
)

func (*widgetWrongKind) Kind() string { return "Sprocket" }

func TestRegisterRejects(t *testing.T) {
	steps := func(k *Kind, vs ...string) {
		k.Versions = nil
		for _, s := range vs {
			k.Versions = append(k.Versions, Step{Version: v(s)})
		}
	}
	tests := map[string]struct {
		mutate func(k *Kind)
		want   string
	}{
		"missing fingerprint": {func(k *Kind) { k.Fingerprint = "" }, `has no Fingerprint; set it to "1.16-546dfd596dfbe991bfbacb836664acaf"`},
		"stale fingerprint":   {func(k *Kind) { k.Fingerprint = "1.16-00" }, "bump Widget's version"},
		"no versions":         {func(k *Kind) { k.Versions = nil }, "no Versions"},
		"gap in versions":     {func(k *Kind) { steps(k, "1.14", "1.16") }, "not contiguous: 1.14 then 1.16"},
		"two majors":          {func(k *Kind) { steps(k, "1.14", "2.0") }, "not contiguous: 1.14 then 2.0"},
		"since not a version": {func(k *Kind) { setField(k, "color", func(f *Field) { f.Since = v("1.17") }) }, "since 1.17 is not one of"},
		"step does nothing": {func(k *Kind) {
			k.Versions = append(k.Versions, Step{Version: v("1.17")})
		}, "version 1.17 adds no field and has no converter"},
		"converter on oldest": {func(k *Kind) { k.Versions[0].Down = widgetMetaToExtra }, "version 1.14 is the oldest"},
		"struct field not in table": {func(k *Kind) {
			k.Fields = k.Fields[:len(k.Fields)-1]
		}, `struct field Color (rivet:"color") is missing from the field table`},
		"table field not in struct": {func(k *Kind) {
			k.Fields = append(k.Fields, Field{Name: "size", Since: v("1.16")})
		}, `field size is in the table but the struct has no field tagged rivet:"size"`},
		"untagged struct field": {func(k *Kind) { k.New = func() Object { return new(widgetUntagged) } }, "struct field Size has no rivet tag"},
		"kind name mismatch":    {func(k *Kind) { k.New = func() Object { return new(widgetWrongKind) } }, `Kind() is "Sprocket"`},
		"nullable non-pointer": {func(k *Kind) { k.New = func() Object { return new(widgetBadNull) } },
			"field color is nullable but its Go type string is not a pointer"},
		"pointer not nullable": {func(k *Kind) { setField(k, "color", func(f *Field) { f.Nullable = false }) },
			"field color has pointer type *string but is not nullable"},
		"map without default": {func(k *Kind) { setField(k, "meta", func(f *Field) { f.Default = nil }) },
			"field meta (map[string]interface {}) is not nullable and needs a non-nil default"},
		"nil map default": {func(k *Kind) { setField(k, "meta", func(f *Field) { f.Default = map[string]any(nil) }) },
			"needs a non-nil default"},
		"default of wrong type": {func(k *Kind) { setField(k, "id", func(f *Field) { f.Default = 0 }) },
			"field id: default has type int, want int64"},
		"nullable with default": {func(k *Kind) { setField(k, "color", func(f *Field) { f.Default = ptr("red") }) },
			"its default must be nil"},
		"name not snake_case": {func(k *Kind) { setField(k, "name", func(f *Field) { f.Name = "Name" }) }, `field name "Name" is not snake_case`},
		"field listed twice":  {func(k *Kind) { k.Fields = append(k.Fields, k.Fields[0]) }, "field id is listed twice"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			k := widgetKind()
			tc.mutate(&k)
			err := NewRegistry().Register(k)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Register error = %v\nwant it to mention %q", err, tc.want)
			}
		})
	}
}

func TestRegisterAccepts(t *testing.T) {
	r := NewRegistry()
	if err := r.Register(widgetKind()); err != nil {
		t.Fatalf("baseline: %v", err)
	}
	if err := r.Register(widgetKind()); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Fatalf("second registration: %v", err)
	}
	// A bump for remote methods alone needs no field and no converter.
	k := widgetKind()
	k.Versions = append(k.Versions, Step{Version: v("1.17"), MethodsOnly: true})
	k.Methods = []string{"Polish(ctx context.Context) error"}
	fp, err := ComputeFingerprint(k)
	if err != nil || !strings.HasPrefix(fp, "1.17-") {
		t.Fatalf("ComputeFingerprint = %q, %v", fp, err)
	}
	k.Fingerprint = fp
	if err := NewRegistry().Register(k); err != nil {
		t.Fatalf("methods-only bump: %v", err)
	}
}

func TestInstall(t *testing.T) {
	r := NewRegistry()
	if err := Install(r); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Allocation", "BIOSSetting", "Chassis", "Conductor", "DeployTemplate", "FirmwareComponent", "InspectionRule", "Node", "NodeHistory", "Port", "Portgroup",
		"Runbook", "Trait", "VolumeConnector", "VolumeTarget"}, r.Kinds()); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if err := Install(r); err == nil {
		t.Error("installing twice succeeded")
	}
	var uk *UnknownKindError
	if _, err := r.Latest("Widget"); !errors.As(err, &uk) || uk.Kind != "Widget" {
		t.Errorf("Latest(Widget) error = %v, want *UnknownKindError", err)
	}
}

package objects

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// FingerprintError reports a kind whose shape changed while its
// declared fingerprint did not: a field or remote method was added, removed
// or retyped without a version bump.
type FingerprintError struct {
	Kind     string
	Declared string
	Computed string
}

// Error implements error.
func (e *FingerprintError) Error() string {
	return fmt.Sprintf("objects: kind %s changed: its fingerprint is %s but %s is declared.\n"+
		"A field or remote method of %s was added, removed or changed. Do not edit the fingerprint alone:\n"+
		"  1. bump %s's version: append a Step to its Versions and give new fields that Since;\n"+
		"  2. add the new version to the HEAD entry of core/release/releases.go;\n"+
		"  3. rerun go test ./core/objects and set %s's Fingerprint to the computed value it then prints;\n"+
		"  4. regenerate the wire fixtures: go test ./core/objects -run TestGoldenHEAD -update.",
		e.Kind, e.Computed, e.Declared, e.Kind, e.Kind, e.Kind)
}

// fingerprint hashes a canonical text of the kind's shape: each field in
// name order with the Go type read from the struct, its nullability,
// default and since, then the remote-method signatures in order. The
// latest version prefixes the hash, as in Ironic's expected fingerprints.
func fingerprint(kd *kind) string {
	return kd.latest().String() + "-" + shapeHash(kd)
}

func shapeHash(kd *kind) string {
	var b strings.Builder
	fmt.Fprintf(&b, "kind %s\n", kd.Name)
	fields := slices.Clone(kd.fields)
	slices.SortFunc(fields, func(a, b *fieldInfo) int { return strings.Compare(a.Name, b.Name) })
	for _, f := range fields {
		def, err := json.Marshal(wireValue(f.def).Interface())
		if err != nil {
			def = []byte(fmt.Sprintf("%#v", f.def.Interface()))
		}
		fmt.Fprintf(&b, "field %s type=%s nullable=%t default=%s since=%s\n", f.Name, f.typ, f.Nullable, def, f.Since)
	}
	methods := slices.Clone(kd.Methods)
	slices.Sort(methods)
	for _, m := range methods {
		fmt.Fprintf(&b, "method %s\n", m)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16])
}

// Fingerprint returns kind's computed fingerprint, "<latest>-<hash>".
func (r *Registry) Fingerprint(kind string) (string, error) {
	kd, err := r.lookup(kind)
	if err != nil {
		return "", err
	}
	return fingerprint(kd), nil
}

// ComputeFingerprint validates k as Register would, without registering it
// or checking k.Fingerprint, and returns its fingerprint. It is how a
// developer (or a test) learns the value to pin after a version bump.
func ComputeFingerprint(k Kind) (string, error) {
	kd, err := build(k)
	if err != nil {
		return "", fmt.Errorf("objects: kind %s: %w", k.Name, err)
	}
	return fingerprint(kd), nil
}

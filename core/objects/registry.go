package objects

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/version"
)

// Registry holds the registered kinds. Build it with NewRegistry and
// Register (or Install) before use; after that it is read-only and safe for
// concurrent use.
type Registry struct {
	kinds map[string]*kind
}

// kind is a registered, validated Kind.
type kind struct {
	Kind
	typ      reflect.Type // the struct type
	fields   []*fieldInfo // table order
	sorted   []*fieldInfo // by name
	byName   map[string]*fieldInfo
	versions []version.Version // oldest first
	since    map[version.Version][]*fieldInfo
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{kinds: map[string]*kind{}}
}

// Register validates k and adds it. It fails fast, naming every problem:
// a struct field missing from the table or the reverse, an invalid field
// declaration, versions that are not contiguous, a version step that adds
// no field and has no converter, and a missing or stale fingerprint.
func (r *Registry) Register(k Kind) error {
	if k.Name == "" || k.New == nil {
		return errors.New("objects: a kind needs a Name and a New function")
	}
	if _, dup := r.kinds[k.Name]; dup {
		return fmt.Errorf("objects: kind %s is already registered", k.Name)
	}
	kd, err := build(k)
	if err != nil {
		return fmt.Errorf("objects: kind %s: %w", k.Name, err)
	}
	fp := fingerprint(kd)
	switch {
	case k.Fingerprint == "":
		return fmt.Errorf("objects: kind %s has no Fingerprint; set it to %q", k.Name, fp)
	case k.Fingerprint != fp:
		return &FingerprintError{Kind: k.Name, Declared: k.Fingerprint, Computed: fp}
	}
	r.kinds[k.Name] = kd
	return nil
}

// build validates k's versions, struct and table.
func build(k Kind) (*kind, error) {
	sample := k.New()
	t := reflect.TypeOf(sample)
	if sample == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("New must return a pointer to a struct, got %T", sample)
	}
	if sample.Kind() != k.Name {
		return nil, fmt.Errorf("New returns %T whose Kind() is %q", sample, sample.Kind())
	}
	kd := &kind{Kind: k, typ: t.Elem(), byName: map[string]*fieldInfo{}, since: map[version.Version][]*fieldInfo{}}
	var errs []error
	errs = append(errs, kd.buildVersions()...)
	errs = append(errs, kd.buildFields()...)
	if len(errs) == 0 {
		errs = append(errs, kd.checkSteps()...)
	}
	return kd, errors.Join(errs...)
}

func (kd *kind) buildVersions() []error {
	if len(kd.Versions) == 0 {
		return []error{errors.New("no Versions")}
	}
	var errs []error
	for i, s := range kd.Versions {
		kd.versions = append(kd.versions, s.Version)
		if i == 0 {
			if s.Up != nil || s.Down != nil {
				errs = append(errs, fmt.Errorf("version %s is the oldest and cannot have converters", s.Version))
			}
			continue
		}
		prev := kd.Versions[i-1].Version
		if s.Version.Major != prev.Major || s.Version.Minor != prev.Minor+1 {
			errs = append(errs, fmt.Errorf("versions are not contiguous: %s then %s", prev, s.Version))
		}
	}
	return errs
}

// buildFields matches the struct's tagged fields with the table.
func (kd *kind) buildFields() []error {
	var errs []error
	tagged := map[string]reflect.StructField{}
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			idx := append(slices.Clone(index), i)
			tag, ok := sf.Tag.Lookup("rivet")
			switch {
			case sf.Anonymous && sf.Type.Kind() == reflect.Struct && !ok:
				walk(sf.Type, idx)
			case !sf.IsExported():
			case !ok || tag == "":
				errs = append(errs, fmt.Errorf("struct field %s has no rivet tag; add it to the struct tag and the field table", sf.Name))
			default:
				// As with Go's promoted fields, the shallowest field wins;
				// two at the same depth are ambiguous.
				prev, dup := tagged[tag]
				switch {
				case !dup || len(idx) < len(prev.Index):
					sf.Index = idx
					tagged[tag] = sf
				case len(idx) == len(prev.Index):
					errs = append(errs, fmt.Errorf("struct fields %s and %s share the name %q", prev.Name, sf.Name, tag))
				}
			}
		}
	}
	walk(kd.typ, nil)
	for _, f := range kd.Fields {
		sf, ok := tagged[f.Name]
		switch {
		case !fieldName.MatchString(f.Name):
			errs = append(errs, fmt.Errorf("field name %q is not snake_case", f.Name))
			continue
		case kd.byName[f.Name] != nil:
			errs = append(errs, fmt.Errorf("field %s is listed twice", f.Name))
			continue
		case !ok:
			errs = append(errs, fmt.Errorf("field %s is in the table but the struct has no field tagged rivet:%q", f.Name, f.Name))
			continue
		case !slices.Contains(kd.versions, f.Since):
			errs = append(errs, fmt.Errorf("field %s: since %s is not one of the kind's Versions %v", f.Name, f.Since, kd.versions))
			continue
		}
		fi, err := bind(f, sf.Index, sf.Type)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		kd.fields = append(kd.fields, fi)
		kd.byName[f.Name] = fi
		kd.since[f.Since] = append(kd.since[f.Since], fi)
	}
	kd.sorted = slices.Clone(kd.fields)
	slices.SortFunc(kd.sorted, func(a, b *fieldInfo) int { return strings.Compare(a.Name, b.Name) })
	for name, sf := range tagged {
		if !slices.ContainsFunc(kd.Fields, func(f Field) bool { return f.Name == name }) {
			errs = append(errs, fmt.Errorf("struct field %s (rivet:%q) is missing from the field table", sf.Name, name))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}

// checkSteps rejects a version that changes nothing it can account for.
func (kd *kind) checkSteps() []error {
	var errs []error
	for _, s := range kd.Versions[1:] {
		if len(kd.since[s.Version]) == 0 && s.Up == nil && s.Down == nil && !s.MethodsOnly {
			errs = append(errs, fmt.Errorf("version %s adds no field and has no converter (Up/Down); "+
				"a bump for remote methods alone sets MethodsOnly", s.Version))
		}
	}
	return errs
}

// lookup returns the registered kind called name.
func (r *Registry) lookup(name string) (*kind, error) {
	kd, ok := r.kinds[name]
	if !ok {
		return nil, &UnknownKindError{Kind: name}
	}
	return kd, nil
}

// kindOf returns obj's registered kind, checking obj's Go type.
func (r *Registry) kindOf(obj Object) (*kind, error) {
	if obj == nil {
		return nil, errors.New("objects: nil object")
	}
	kd, err := r.lookup(obj.Kind())
	if err != nil {
		return nil, err
	}
	if t := reflect.TypeOf(obj); t.Kind() != reflect.Pointer || t.Elem() != kd.typ || reflect.ValueOf(obj).IsNil() {
		return nil, fmt.Errorf("objects: %T is not the registered type of kind %s (*%s)", obj, kd.Name, kd.typ)
	}
	return kd, nil
}

func (kd *kind) oldest() version.Version { return kd.versions[0] }
func (kd *kind) latest() version.Version { return kd.versions[len(kd.versions)-1] }

// check returns an *IncompatibleVersionError unless v is one of kd's
// versions.
func (kd *kind) check(v version.Version) error {
	if v.Major == kd.oldest().Major && v.Minor >= kd.oldest().Minor && v.Minor <= kd.latest().Minor {
		return nil
	}
	return &IncompatibleVersionError{Kind: kd.Name, Got: v, Latest: kd.latest(), Oldest: kd.oldest()}
}

// Kinds returns the registered kind names, sorted.
func (r *Registry) Kinds() []string {
	out := make([]string, 0, len(r.kinds))
	for name := range r.kinds {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Latest returns kind's latest version: the version objects have in memory.
func (r *Registry) Latest(kind string) (version.Version, error) {
	kd, err := r.lookup(kind)
	if err != nil {
		return version.Version{}, err
	}
	return kd.latest(), nil
}

// Versions returns every version of kind this code converts, oldest first.
func (r *Registry) Versions(kind string) ([]version.Version, error) {
	kd, err := r.lookup(kind)
	if err != nil {
		return nil, err
	}
	return slices.Clone(kd.versions), nil
}

// CheckVersion returns nil if this code can convert kind at v, else an
// *UnknownKindError or *IncompatibleVersionError. dbsync uses it to vet
// stored rows before an upgrade.
func (r *Registry) CheckVersion(kind string, v version.Version) error {
	kd, err := r.lookup(kind)
	if err != nil {
		return err
	}
	return kd.check(v)
}

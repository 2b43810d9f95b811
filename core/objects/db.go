package objects

import (
	"fmt"
	"reflect"

	"github.com/rivetmetal/rivet/core/release"
	"github.com/rivetmetal/rivet/core/version"
)

// FromDB finishes loading obj, which the DB layer filled from a row written
// at version stored (fields that version lacks hold zero values): it takes
// the change-tracking snapshot, then converts obj in place to the latest
// version with remove_unavailable_fields=false, so the fields the
// conversion set stay changed and a later save writes them (Ironic's
// _from_db_object). A stored version this code cannot convert is an
// *IncompatibleVersionError.
func (r *Registry) FromDB(obj Object, stored version.Version) error {
	return r.fromDB(obj, stored, false)
}

// FromDBReadOnly is FromDB for an object that will only be read (a REST
// view of a list): no change-tracking snapshot is taken, which was a deep
// copy of every node of a page (an eighth of GET /v1/nodes/detail's
// allocations), and the object cannot be saved (ChangeSet.ReadOnly).
func (r *Registry) FromDBReadOnly(obj Object, stored version.Version) error {
	return r.fromDB(obj, stored, true)
}

// fromDB is FromDB, or FromDBReadOnly when readOnly is set.
func (r *Registry) fromDB(obj Object, stored version.Version, readOnly bool) error {
	kd, err := r.kindOf(obj)
	if err != nil {
		return err
	}
	if err := kd.check(stored); err != nil {
		return err
	}
	for _, fi := range kd.fields {
		fi.normalize(obj)
	}
	if readOnly {
		*obj.Changes() = ChangeSet{readOnly: true}
	} else {
		kd.resetChanges(obj)
	}
	marked, err := kd.convert(obj, stored, kd.latest(), false)
	if err != nil || readOnly {
		return err
	}
	obj.Changes().mark(marked)
	return nil
}

// refuseReadOnly is ErrReadOnly for an object loaded read-only.
func (kd *kind) refuseReadOnly(obj Object) error {
	if obj.Changes().readOnly {
		return fmt.Errorf("objects: %s: %w", kd.Name, ErrReadOnly)
	}
	return nil
}

// ForDB returns a copy of obj converted to target with
// remove_unavailable_fields=false, and the fields to write: obj's changes
// plus the conversion's (fields target lacks are reset to their defaults
// and listed, so the write clears them). obj is untouched. The caller always
// writes the version column too, set to target (Ironic's
// do_version_changes_for_db). After the write, the caller resets obj's
// changes (ResetChanges) or reloads it. An object loaded read-only is
// ErrReadOnly.
func (r *Registry) ForDB(obj Object, target version.Version) (out Object, changed []string, err error) {
	kd, err := r.kindOf(obj)
	if err != nil {
		return nil, nil, err
	}
	if err := kd.refuseReadOnly(obj); err != nil {
		return nil, nil, err
	}
	if err := kd.check(target); err != nil {
		return nil, nil, err
	}
	out = kd.copy(obj)
	marked, err := kd.convert(out, kd.latest(), target, false)
	if err != nil {
		return nil, nil, err
	}
	out.Changes().mark(marked)
	return out, kd.changed(out), nil
}

// ForInsert is ForDB for a row written whole (an INSERT, or a DELETE by
// primary key): the same converted copy, without the fields to write,
// which cost a copy of obj's marks and a comparison of every field with
// its snapshot. The copy has no change set (it would count every field
// as changed); read its values, not its changes. An object loaded
// read-only is ErrReadOnly.
func (r *Registry) ForInsert(obj Object, target version.Version) (Object, error) {
	kd, err := r.kindOf(obj)
	if err != nil {
		return nil, err
	}
	if err := kd.refuseReadOnly(obj); err != nil {
		return nil, err
	}
	if err := kd.check(target); err != nil {
		return nil, err
	}
	out := kd.New()
	dst, src := reflect.ValueOf(out).Elem(), reflect.ValueOf(obj).Elem()
	for _, fi := range kd.fields {
		fi.copyInto(fi.in(dst), fi.normalized(src))
	}
	if _, err := kd.convert(out, kd.latest(), target, false); err != nil {
		return nil, err
	}
	return out, nil
}

// Target returns the version to write or send kind at under the effective
// release: the newest version the release lists for kind, or the latest
// when it does not list kind (a kind newer than the release). A listed
// version this code cannot produce is an *IncompatibleVersionError, which
// means the pin is wrong for this binary.
func (r *Registry) Target(kind string, effective release.Entry) (version.Version, error) {
	kd, err := r.lookup(kind)
	if err != nil {
		return version.Version{}, err
	}
	v, ok := effective.ObjectVersion(kind)
	if !ok {
		return kd.latest(), nil
	}
	if err := kd.check(v); err != nil {
		return version.Version{}, fmt.Errorf("objects: release %s: %w", effective.Label(), err)
	}
	return v, nil
}

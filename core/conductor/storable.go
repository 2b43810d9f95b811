package conductor

import (
	"net/http"
	"slices"
	"strings"

	"github.com/rivetmetal/rivet/core/objects"
)

// unstorable refuses (406) a write of fields this conductor cannot store:
// it saves objects at its effective release's versions (the seed's "if
// pinned, save in pinned version"), which clears a field that version
// lacks. An API ahead of its conductors (seed 000 step 3 done out of
// order, which db/upgrade.Guard refuses, or an auto pin moving between two
// heartbeats) must never get 200 for a write the save drops: the seed's
// answer to a request the pinning did not stop is 406. fields are the
// fields the caller set; a field at its default loses nothing.
func (s *Service) unstorable(kind string, obj objects.Object, fields []string) error {
	reg := s.store.Registry()
	eff := s.pinner.Effective()
	target, err := reg.Target(kind, eff)
	if err != nil {
		return err
	}
	if latest, err := reg.Latest(kind); err != nil || latest == target {
		return err // unpinned (the common case): every field is stored
	}
	table, err := reg.FieldTable(kind)
	if err != nil {
		return err
	}
	var lost []string
	for _, f := range fields {
		i := slices.IndexFunc(table, func(fd objects.Field) bool { return fd.Name == f })
		if i < 0 || reg.Available(kind, f, target) {
			continue
		}
		val, err := reg.Get(obj, f)
		if err != nil {
			return err
		}
		if !isDefault(val, table[i]) {
			lost = append(lost, f)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	pin := s.pinner.Pin().String()
	if pin == "" {
		pin = `""`
	}
	return classed("NotAcceptable", http.StatusNotAcceptable, nil,
		"rivet-conductor on %s stores %s objects at version %s (release %s, [DEFAULT] pin_release_version = %s), which has no %s: "+
			"the change would be lost. Conductors are unpinned before APIs (docs/admin/rolling-upgrade.md, step 3).",
		s.cfg.Hostname, kind, target, eff.Label(), pin, strings.Join(lost, ", "))
}

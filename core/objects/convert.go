package objects

import (
	"fmt"

	"github.com/rivetmetal/rivet/core/version"
)

// convert moves obj, which holds the values of version from, to version to
// (both checked by the caller), one step at a time, in place, and returns
// the fields it changed.
//
// Upward, each step first gives the fields it adds their defaults, then runs
// its Up converter. Downward, each step first runs its Down converter, then
// resets the fields it added: with remove they are not marked (the wire
// drops them), without they are marked changed so a DB write clears them.
// Either way the struct ends up holding defaults for unavailable fields.
func (kd *kind) convert(obj Object, from, to version.Version, remove bool) (map[string]bool, error) {
	marked := map[string]bool{}
	c := &Conversion{Object: obj, RemoveUnavailable: remove, kind: kd, marked: marked}
	i, j := kd.index(from), kd.index(to)
	for ; i < j; i++ {
		step := kd.Versions[i+1]
		for _, fi := range kd.since[step.Version] {
			fi.reset(obj)
			c.Mark(fi.Name)
		}
		if step.Up != nil {
			if err := step.Up(c); err != nil {
				return nil, fmt.Errorf("objects: %s %s→%s: %w", kd.Name, kd.Versions[i].Version, step.Version, err)
			}
		}
	}
	for ; i > j; i-- {
		step := kd.Versions[i]
		if step.Down != nil {
			if err := step.Down(c); err != nil {
				return nil, fmt.Errorf("objects: %s %s→%s: %w", kd.Name, step.Version, kd.Versions[i-1].Version, err)
			}
		}
		for _, fi := range kd.since[step.Version] {
			fi.reset(obj)
			if remove {
				delete(marked, fi.Name)
			} else {
				c.Mark(fi.Name)
			}
		}
	}
	return marked, nil
}

// index returns v's position in kd.versions; v must be checked.
func (kd *kind) index(v version.Version) int {
	return v.Minor - kd.oldest().Minor
}

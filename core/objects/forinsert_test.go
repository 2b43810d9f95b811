package objects

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rivetmetal/rivet/core/version"
)

// ForInsert must give the values ForDB's copy holds, for every kind at
// every version, new and loaded, and its errors.
func TestForInsertMatchesForDB(t *testing.T) {
	for _, r := range []*Registry{benchRegistry2(t), testRegistry(t)} {
		for _, kind := range r.Kinds() {
			mk, ok := samples()[kind]
			if !ok {
				mk = func() Object { o, _ := r.New(kind); return o }
			}
			kd, _ := r.lookup(kind)
			targets := append([]version.Version{{Major: kd.latest().Major + 1}}, kd.versions...)
			for _, v := range targets {
				for _, obj := range []Object{mk(), loadedSample2(r, mk)} {
					want, _, wantErr := r.ForDB(obj, v)
					got, gotErr := r.ForInsert(obj, v)
					if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
						t.Fatalf("%s at %s: ForInsert error %v, ForDB %v", kind, v, gotErr, wantErr)
					}
					if wantErr != nil {
						continue
					}
					wv, _ := r.Values(want)
					gv, _ := r.Values(got)
					if d := cmp.Diff(wv, gv); d != "" {
						t.Fatalf("%s at %s: ForInsert values differ from ForDB's (-ForDB +ForInsert):\n%s", kind, v, d)
					}
					before, _ := r.Values(obj)
					if m, ok := gv["extra"].(map[string]any); ok {
						m["added-by-test"] = 1
						if after, _ := r.Values(obj); !cmp.Equal(before, after) {
							t.Fatalf("%s at %s: ForInsert's copy shares a map with the object", kind, v)
						}
					}
				}
			}
		}
	}
}

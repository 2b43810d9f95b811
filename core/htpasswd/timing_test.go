package htpasswd

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// load writes users (name → password) at cost and loads the file.
func loadAt(t testing.TB, cost int, users map[string]string) (*File, string) {
	t.Helper()
	var data []byte
	for u, pw := range users {
		h, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, u+":"+string(h)+"\n"...)
	}
	p := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return f, p
}

// compareRecorder counts the bcrypt comparisons Check makes and the cost
// of the hash each used, then runs the real comparison.
type compareRecorder struct {
	calls atomic.Int64
	cost  atomic.Int64
}

func (c *compareRecorder) install(f *File) {
	f.compare = func(hash, pw []byte) error {
		c.calls.Add(1)
		cost, err := bcrypt.Cost(hash)
		if err != nil {
			cost = -1
		}
		c.cost.Store(int64(cost))
		return bcrypt.CompareHashAndPassword(hash, pw)
	}
}

// An unknown user costs one bcrypt comparison at the users' cost, exactly
// what a wrong password costs: the answer time tells nothing.
func TestUnknownUserCostsABcryptComparison(t *testing.T) {
	const cost = bcrypt.MinCost + 2
	f, _ := loadAt(t, cost, map[string]string{"alice": "s3cret"})
	tests := map[string]struct {
		user, pw string
		want     bool
	}{
		"right password": {"alice", "s3cret", true},
		"wrong password": {"alice", "nope", false},
		"unknown user":   {"mallory", "s3cret", false},
		"empty user":     {"", "", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var rec compareRecorder
			rec.install(f)
			if got := f.Check(tc.user, tc.pw); got != tc.want {
				t.Fatalf("Check = %v, want %v", got, tc.want)
			}
			if n := rec.calls.Load(); n != 1 {
				t.Fatalf("%d bcrypt comparisons, want 1", n)
			}
			if c := rec.cost.Load(); c != int64(cost) {
				t.Fatalf("compared against a hash of cost %d, want the users' cost %d", c, cost)
			}
		})
	}
}

// The dummy follows the file: a reload that raises the users' cost raises
// the unknown user's, and an empty file still costs a comparison.
func TestDummyFollowsReload(t *testing.T) {
	f, p := loadAt(t, bcrypt.MinCost, map[string]string{"alice": "a"})
	var rec compareRecorder
	rec.install(f)
	f.Check("nobody", "x")
	if c := rec.cost.Load(); c != int64(bcrypt.MinCost) {
		t.Fatalf("dummy cost %d, want %d", c, bcrypt.MinCost)
	}
	h, err := bcrypt.GenerateFromPassword([]byte("b"), bcrypt.MinCost+1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("bob:"+string(h)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	f.Check("nobody", "x")
	if c := rec.cost.Load(); c != int64(bcrypt.MinCost+1) {
		t.Fatalf("after reload dummy cost %d, want %d", c, bcrypt.MinCost+1)
	}
	if err := os.WriteFile(p, []byte("# nobody\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	before := rec.calls.Load()
	if f.Check("nobody", "x") || rec.calls.Load() != before+1 || rec.cost.Load() != int64(bcrypt.DefaultCost) {
		t.Fatalf("empty file: calls %d→%d, cost %d", before, rec.calls.Load(), rec.cost.Load())
	}
}

// benchCost is the cost of the shipped example and of htpasswd -B -C 10.
const benchCost = 10

// BenchmarkBasicAuthUnknownUser and BenchmarkBasicAuthWrongPassword must
// report the same time per op: before the dummy took the users' cost an
// unknown user answered about 40 times faster, telling which names exist.
func BenchmarkBasicAuthUnknownUser(b *testing.B) {
	f, _ := loadAt(b, benchCost, map[string]string{"alice": "s3cret"})
	b.ResetTimer()
	for b.Loop() {
		if f.Check("mallory", "guess") {
			b.Fatal("accepted")
		}
	}
}

func BenchmarkBasicAuthWrongPassword(b *testing.B) {
	f, _ := loadAt(b, benchCost, map[string]string{"alice": "s3cret"})
	b.ResetTimer()
	for b.Loop() {
		if f.Check("alice", "guess") {
			b.Fatal("accepted")
		}
	}
}

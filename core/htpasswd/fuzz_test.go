package htpasswd

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// FuzzParse feeds arbitrary htpasswd content to the parser: it never
// panics and accepts only named users with well-formed bcrypt hashes.
func FuzzParse(f *testing.F) {
	const hash = "$2y$05$Q6zb3WDAThnhDHuw7JsSa.oTg1OwlSAuYaHFOHQ1Iw/4Wd.FW4r9W" // bcrypt of "pw"
	for _, s := range []string{
		"admin:" + hash + "\n", "# comment\n\nadmin:" + hash + "\nops:" + hash,
		"admin:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "admin:$apr1$x$y", ":" + hash, "admin", "a:$2y$99$" + hash[7:], "\xff:\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		users, err := Parse([]byte(data))
		if err != nil {
			return
		}
		for u, h := range users {
			if _, err := bcrypt.Cost(h); u == "" || err != nil || !strings.HasPrefix(string(h), "$2") {
				t.Fatalf("accepted user %q with hash %q", u, h)
			}
		}
	})
}

package conductor

import (
	"strings"
	"testing"
)

// SHA-crypt matches crypt(3) (the values `openssl passwd -5` and `-6`
// print for the same password and salt), and a random salt makes every
// hash differ.
func TestShaCrypt(t *testing.T) {
	for _, c := range []struct{ pw, salt, algo, want string }{
		{"secret", "abcdefgh", "sha256", "$5$abcdefgh$gruCpC7VkOTspMQTTSAR8mtlO9Upms.fwqE5y16JVM."},
		{"Hello world!", "saltstring", "sha256", "$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"},
		{"Hello world!", "saltstring", "sha512", "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1"},
		{"we have a short salt string but not a short password", "short", "sha256", "$5$short$k38kpRP0CfxHLIcmymaSTFLK.iFfF4tKryDuEGKp6SC"},
	} {
		got, err := shaCrypt(c.pw, c.salt, c.algo)
		if err != nil || got != c.want {
			t.Errorf("shaCrypt(%q, %q, %s) = %q, %v; want %q", c.pw, c.salt, c.algo, got, err, c.want)
		}
	}
	a, _ := hashRescuePassword("pw", "sha256")
	b, _ := hashRescuePassword("pw", "sha256")
	if a == b || !strings.HasPrefix(a, "$5$") || len(strings.Split(a, "$")[2]) != 16 {
		t.Errorf("hashes %q, %q", a, b)
	}
	if _, err := hashRescuePassword("pw", "md5"); err == nil {
		t.Error("md5 accepted")
	}
}

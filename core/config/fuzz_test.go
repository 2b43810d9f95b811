package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzConfigValues sets one option (picked by index) to an arbitrary value
// through the environment, and loads an arbitrary INI file beside it: the
// parsers and validators never panic, and a secret option's value never
// appears in an error.
func FuzzConfigValues(f *testing.F) {
	opts := Options()
	f.Add(uint16(0), "x", "[DEFAULT]\nlog_level = debug\n")
	f.Add(uint16(3), "90s", "[api]\nport = 99999\n")
	f.Add(uint16(7), "-1", "[json_rpc]\npassword = s3cret-fuzz\n[database]\nconnection = postgresql://u:s3cret-fuzz@db/x\n")
	f.Add(uint16(11), "1.5e300", "[conductor]\nenabled_hardware_types = ,,,\n")
	f.Add(uint16(20), "a,b,,c", "no section = 1\n")
	f.Add(uint16(30), "\x00\xff", "[DEFAULT\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, pick uint16, value, file string) {
		o := opts[int(pick)%len(opts)]
		if o.Secret {
			value = "Zx9-" + value // distinctive, so finding it in an error is a leak
		}
		path := filepath.Join(dir, "rivet.conf")
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load([]string{path}, []string{o.EnvVar() + "=" + value})
		if err != nil && o.Secret && strings.Contains(err.Error(), value) {
			t.Fatalf("%s's secret value is in the error: %v", o.Key(), err)
		}
	})
}

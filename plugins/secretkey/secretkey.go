package secretkey

import "strings"

// parts are oslo.utils' strutils._SANITIZE_KEYS, which Ironic masks with,
// plus "auth_key" and "priv_key" (SNMPv3 keys): a key containing any of
// them, case-insensitively, holds a secret.
var parts = []string{
	"adminpass", "admin_pass", "password", "admin_password", "auth_token", "new_pass", "auth_password",
	"secret_uuid", "secret", "sys_pswd", "token", "configdrive", "chappassword", "encrypted_key",
	"private_key", "fernetkey", "sslkey", "passphrase", "cephxkey", "pskey", "keystone_user_password",
	"auth_key", "priv_key",
}

// Is reports whether key names a secret value.
func Is(key string) bool {
	lk := strings.ToLower(key)
	for _, p := range parts {
		if strings.Contains(lk, p) {
			return true
		}
	}
	return false
}

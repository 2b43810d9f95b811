package api

import "strings"

// Masked is what a secret value is replaced by in every response.
const Masked = "******"

// sanitizeKeys are oslo.utils' strutils._SANITIZE_KEYS: a key containing
// any of them (case-insensitively) holds a secret.
var sanitizeKeys = []string{
	"adminpass", "admin_pass", "password", "admin_password", "auth_token", "new_pass", "auth_password",
	"secret_uuid", "secret", "sys_pswd", "token", "configdrive", "chappassword", "encrypted_key",
	"private_key", "fernetkey", "sslkey", "passphrase", "cephxkey", "pskey", "keystone_user_password",
}

// explicitKeys are masked although no sanitize key matches them (Ironic's
// node_sanitize: "key" alone does not match).
var explicitKeys = map[string]bool{"snmp_auth_key": true, "snmp_priv_key": true}

func isSecretKey(k string) bool {
	lk := strings.ToLower(k)
	if explicitKeys[lk] {
		return true
	}
	for _, s := range sanitizeKeys {
		if strings.Contains(lk, s) {
			return true
		}
	}
	return false
}

// maskDict returns a copy of m with secret values replaced by Masked,
// recursing into nested objects and lists (oslo's mask_dict_password).
func maskDict(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if isSecretKey(k) {
			out[k] = Masked
			continue
		}
		out[k] = maskValue(v)
	}
	return out
}

func maskValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return maskDict(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = maskValue(e)
		}
		return out
	}
	return v
}

// maskInstanceInfo masks instance_info: secrets as driver_info, and
// image_url and configdrive whenever set.
func maskInstanceInfo(m map[string]any) map[string]any {
	out := maskDict(m)
	for _, k := range []string{"image_url", "configdrive"} {
		if v, ok := out[k]; ok && v != nil && v != "" {
			out[k] = Masked
		}
	}
	return out
}

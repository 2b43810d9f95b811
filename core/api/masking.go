package api

import "github.com/rivetmetal/rivet/plugins/secretkey"

// Masked is what a secret value is replaced by in every response.
const Masked = "******"

// isSecretKey is Rivet's one secret-key rule, shared with the plugin SDK
// and the database's credential encryption.
func isSecretKey(k string) bool { return secretkey.Is(k) }

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

package api

import (
	"maps"

	"github.com/rivetmetal/rivet/plugins/redact"
	"github.com/rivetmetal/rivet/plugins/secretkey"
)

// Masked is what a secret value is replaced by in every response.
const Masked = redact.Masked

// isSecretKey is Rivet's one secret-key rule, shared with the plugin SDK
// and the database's credential encryption.
func isSecretKey(k string) bool { return secretkey.Is(k) }

// maskDict returns m with secret values replaced by Masked and URL
// credentials hidden, recursing into nested objects and lists (oslo's
// mask_dict_password, package redact); {} for nil. The result may be m
// itself: never change it.
func maskDict(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return redact.Dict(m)
}

// maskInstanceInfo masks instance_info: secrets as driver_info, and
// image_url and configdrive whenever set.
func maskInstanceInfo(m map[string]any) map[string]any {
	out := maskDict(m)
	copied := false
	for _, k := range []string{"image_url", "configdrive"} {
		if v, ok := out[k]; ok && v != nil && v != "" && v != Masked {
			if !copied {
				out, copied = maps.Clone(out), true
			}
			out[k] = Masked
		}
	}
	return out
}

// maskView masks, in place, every field of a resource's view that may hold
// a secret: each JSON document (driver_info, extra, properties, …) with
// maskDict, instance_info with maskInstanceInfo, and the free texts
// (last_error, maintenance_reason, description) with redact.Text. Views
// are built unmasked so that a PATCH applies to the stored values
// (nodeDoc and the like); every answer passes through here.
func maskView(view map[string]any) map[string]any {
	for k, v := range view {
		view[k] = maskValue(k, v)
	}
	return view
}

// maskValue is the value of a view's field k as maskView leaves it.
func maskValue(k string, v any) any {
	switch t := v.(type) {
	case map[string]any:
		if k == "instance_info" {
			return maskInstanceInfo(t)
		}
		return maskDict(t)
	case string:
		if k == "last_error" || k == "maintenance_reason" || k == "description" {
			return redact.Text(t)
		}
	}
	return v
}

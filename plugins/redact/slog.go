package redact

import (
	"fmt"
	"log/slog"

	"github.com/rivetmetal/rivet/plugins/secretkey"
)

// Attr masks one log attribute; it has the shape of
// slog.HandlerOptions.ReplaceAttr, and Rivet's process logger and the
// plugin SDK's logger both install it. An attribute whose key names a
// secret becomes Masked whatever its value; the message, string values,
// errors and fmt.Stringers are masked as Text; maps and lists as Value.
// LogValuers are resolved before it is called (slog does so), so a type
// that logs as a group is masked field by field. Other values (structs
// formatted by the handler) are not looked into: log them as a LogValuer.
func Attr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey) {
		return a
	}
	if secretkey.Is(a.Key) {
		return slog.String(a.Key, Masked)
	}
	switch a.Value.Kind() {
	case slog.KindString:
		s := a.Value.String()
		if m := Text(s); m != s {
			a.Value = slog.StringValue(m)
		}
	case slog.KindAny:
		a.Value = anyValue(a.Value)
	}
	return a
}

// anyValue masks a KindAny value; it returns v itself when nothing in it
// needed masking, so the handler formats it as it would have.
func anyValue(v slog.Value) slog.Value {
	switch x := v.Any().(type) {
	case error:
		if s := x.Error(); Text(s) != s {
			return slog.StringValue(Text(s))
		}
	case map[string]any:
		return slog.AnyValue(Dict(x))
	case map[string]string:
		out := make(map[string]string, len(x))
		for k, s := range x {
			if secretkey.Is(k) {
				out[k] = Masked
			} else {
				out[k] = Text(s)
			}
		}
		return slog.AnyValue(out)
	case []any, []string:
		return slog.AnyValue(Value(x))
	case fmt.Stringer:
		if s := x.String(); Text(s) != s {
			return slog.StringValue(Text(s))
		}
	}
	return v
}

package plugins

import (
	"io"
	"log/slog"
	"os"

	"github.com/rivetmetal/rivet/plugins/redact"
)

// NewLogger returns a slog.Logger for a driver that writes hclog's JSON
// format to the process's stderr as it is now. The host parses those lines
// and re-emits them, with their level and attributes, into its own log.
//
// Call it in main before Serve: once Serve runs, go-plugin replaces
// os.Stderr with a pipe the host discards. Records are masked as the
// host's own log is (redact.Attr): attributes whose key names a secret
// (IsSecretKey), and URL credentials and secret key=value pairs in the
// message and in values.
func NewLogger(level slog.Leveler) *slog.Logger {
	return newLogger(os.Stderr, level)
}

func newLogger(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level:       level,
		ReplaceAttr: hclogAttr,
	}))
}

// hclogAttr renames slog's built-in keys to hclog's (@message, @level,
// @timestamp) and masks secrets.
func hclogAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 {
		switch a.Key {
		case slog.MessageKey:
			return slog.String("@message", redact.Text(a.Value.String()))
		case slog.LevelKey:
			return slog.String("@level", hclogLevel(a.Value.Any()))
		case slog.TimeKey:
			return slog.String("@timestamp", a.Value.Time().Format("2006-01-02T15:04:05.000000Z07:00"))
		}
	}
	return redact.Attr(groups, a)
}

func hclogLevel(v any) string {
	l, ok := v.(slog.Level)
	if !ok {
		return "info"
	}
	switch {
	case l < slog.LevelDebug:
		return "trace"
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	}
	return "error"
}

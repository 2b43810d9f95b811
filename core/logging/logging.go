package logging

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/rivetmetal/rivet/plugins/redact"
)

// Formats lists the accepted log formats, as [DEFAULT] log_format declares them.
var Formats = []string{"text", "json"}

// Levels lists the accepted level names, as [DEFAULT] log_level declares them.
var Levels = []string{"debug", "info", "warn", "error"}

// New returns a logger writing to w in format ("text" or "json") at level
// (one of Levels), and the LevelVar that controls it at runtime. Every
// record is masked (redact.Attr): secret-named attributes, and URL
// credentials and secret key=value pairs in the message, string values,
// errors, maps and lists.
func New(w io.Writer, format, level string) (*slog.Logger, *slog.LevelVar, error) {
	lvl, err := ParseLevel(level)
	if err != nil {
		return nil, nil, err
	}
	lv := new(slog.LevelVar)
	lv.Set(lvl)
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: redact.Attr}
	var h slog.Handler
	switch strings.ToLower(format) {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, nil, fmt.Errorf("unknown log format %q: valid values are %s", format, strings.Join(Formats, ", "))
	}
	return slog.New(h), lv, nil
}

// ParseLevel parses a level name (case-insensitive).
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q: valid values are %s", s, strings.Join(Levels, ", "))
}

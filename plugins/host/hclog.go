package host

import (
	"context"
	"io"
	"log"
	"log/slog"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/rivetmetal/rivet/plugins"
)

// slogLogger adapts a *slog.Logger to hclog.Logger, which go-plugin uses
// for its own lines and for every line a plugin writes to stderr. The hclog
// logger name becomes a "logger" attribute; values under secret-looking keys
// are masked, as the SDK cannot stop a driver from logging one.
type slogLogger struct {
	log     *slog.Logger
	name    string
	implied []any
	level   hclog.Level
}

// newHCLog returns an hclog.Logger writing to log; Trace lines go out at
// slog level Debug-4.
func newHCLog(log *slog.Logger) hclog.Logger {
	return &slogLogger{log: log, level: hclog.Trace}
}

var _ hclog.Logger = (*slogLogger)(nil)

func slogLevel(l hclog.Level) slog.Level {
	switch l {
	case hclog.Trace:
		return slog.LevelDebug - 4
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	}
	return slog.LevelInfo
}

func (l *slogLogger) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off || level < l.level {
		return
	}
	lv := slogLevel(level)
	ctx := context.Background()
	if !l.log.Enabled(ctx, lv) {
		return
	}
	attrs := make([]any, 0, len(l.implied)+len(args)+2)
	if l.name != "" {
		attrs = append(attrs, "logger", l.name)
	}
	attrs = append(attrs, maskArgs(l.implied)...)
	attrs = append(attrs, maskArgs(args)...)
	l.log.Log(ctx, lv, msg, attrs...)
}

// maskArgs masks the value after any key that names a secret.
func maskArgs(args []any) []any {
	out := make([]any, len(args))
	copy(out, args)
	for i := 0; i+1 < len(out); i += 2 {
		if k, ok := out[i].(string); ok && plugins.IsSecretKey(k) {
			out[i+1] = plugins.Masked
		}
	}
	return out
}

func (l *slogLogger) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }
func (l *slogLogger) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }
func (l *slogLogger) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l *slogLogger) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l *slogLogger) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }

func (l *slogLogger) enabled(level hclog.Level) bool {
	return level >= l.level && l.log.Enabled(context.Background(), slogLevel(level))
}

func (l *slogLogger) IsTrace() bool { return l.enabled(hclog.Trace) }
func (l *slogLogger) IsDebug() bool { return l.enabled(hclog.Debug) }
func (l *slogLogger) IsInfo() bool  { return l.enabled(hclog.Info) }
func (l *slogLogger) IsWarn() bool  { return l.enabled(hclog.Warn) }
func (l *slogLogger) IsError() bool { return l.enabled(hclog.Error) }

func (l *slogLogger) ImpliedArgs() []any { return l.implied }

func (l *slogLogger) With(args ...any) hclog.Logger {
	c := *l
	c.implied = append(append([]any(nil), l.implied...), args...)
	return &c
}

func (l *slogLogger) Name() string { return l.name }

func (l *slogLogger) Named(name string) hclog.Logger {
	c := *l
	if c.name != "" {
		c.name += "." + name
	} else {
		c.name = name
	}
	return &c
}

func (l *slogLogger) ResetNamed(name string) hclog.Logger {
	c := *l
	c.name = name
	return &c
}

func (l *slogLogger) SetLevel(level hclog.Level) { l.level = level }

// GetLevel reports the most verbose level the slog handler accepts, so that
// go-plugin skips parsing plugin lines nobody would see.
func (l *slogLogger) GetLevel() hclog.Level {
	for _, lv := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if l.enabled(lv) {
			return lv
		}
	}
	return hclog.Off
}

func (l *slogLogger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(l.StandardWriter(opts), "", 0)
}

func (l *slogLogger) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		l.Info(strings.TrimRight(string(p), "\n"))
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

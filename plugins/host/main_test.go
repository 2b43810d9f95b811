package host_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"

	"github.com/rivetmetal/rivet/plugins/plugintest"
)

// testPluginBin is plugins/internal/testplugin, built once per test binary.
var testPluginBin string

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		runHostHelper(path) // never returns
	}
	dir, err := os.MkdirTemp("", "rivet-host-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testPluginBin, err = plugintest.Build(dir, "github.com/rivetmetal/rivet/plugins/internal/testplugin", "rivet-driver-test")
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, "build testplugin:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// logBuffer is a concurrency-safe slog sink for asserting on log output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newLog(level slog.Level) (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: level})), b
}

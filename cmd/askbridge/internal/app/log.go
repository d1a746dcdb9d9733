package app

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// newLogger writes human-readable lines to a terminal and JSON anywhere
// else (a file, a log collector), unless the format is forced. Secrets
// never reach it: they are Secret values, which render as REDACTED.
func newLogger(w io.Writer, format, level string) zerolog.Logger {
	lvl, err := parseLogLevel(level)
	if err != nil {
		lvl = zerolog.InfoLevel // refused at start (Settings.check)
	}
	console := format == "console"
	if format == "" || format == "auto" {
		if f, ok := w.(*os.File); ok {
			console = isatty.IsTerminal(f.Fd())
		}
	}
	if console {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}

// parseLogLevel reads ASKBRIDGE_LOG_LEVEL, the same words for every
// command ("" is info; askbridge mcp has a default of its own).
func parseLogLevel(raw string) (zerolog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "", "info":
		return zerolog.InfoLevel, nil
	case "trace":
		return zerolog.TraceLevel, nil
	case "debug":
		return zerolog.DebugLevel, nil
	case "warn", "warning":
		return zerolog.WarnLevel, nil
	case "error", "fatal", "panic":
		return zerolog.ErrorLevel, nil
	}
	return 0, fmt.Errorf("ASKBRIDGE_LOG_LEVEL: %q is not debug, info, warn or error", raw)
}

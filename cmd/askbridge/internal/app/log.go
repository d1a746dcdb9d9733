package app

import (
	"io"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// newLogger writes human-readable lines to a terminal and JSON anywhere
// else (a file, a log collector), unless the format is forced. Secrets
// never reach it: they are Secret values, which render as REDACTED.
func newLogger(w io.Writer, format, level string) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
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

// Package app is the askbridge program: the server (serve), the CLI that
// talks to it (ask, questions, answer, decline, events), the MCP stdio
// server (mcp) and version. It is a package rather than cmd/askbridge's
// main so that the tests of its parts can live in packages of their own
// (internal/chat, internal/console) and import it; cmd/askbridge is
// only Exit.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/askbridge/askbridge/internal/gcfloor"
)

// version is set at build time with -ldflags
// "-X github.com/askbridge/askbridge/cmd/askbridge/internal/app.version=...".
var version = "dev"

// Exit runs the program as this process (its arguments, environment and
// standard streams; SIGINT or SIGTERM stops it) and exits with the
// program's code. It is cmd/askbridge's main, and a test binary's when a
// test runs that binary as the program.
func Exit() {
	fenv, err := newFileEnv(os.Getenv, openFile, os.Stderr)
	if err == nil && len(os.Args) > 1 && settingsCommands[os.Args[1]] {
		err = fenv.check()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "askbridge:", err)
		os.Exit(exitUsage)
	}
	getenv := fenv.Getenv
	ctx := stopOnSignal()
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		// The heap may grow to a floor before the collector runs: a
		// burst's slowest answers were the ones a collection caught
		// (gcfloor). It is the process's setting, kept for its life, so
		// it is set here and not in serve, which tests also run inside
		// their own process. In a container, the soft limit stays under
		// its memory limit (the cgroup's, read by automemlimit).
		gcfloor.Server(getenv, memlimit.FromCgroup)
	}
	os.Exit(Run(ctx, os.Args[1:], getenv, os.Stdin, os.Stdout, os.Stderr))
}

// settingsCommands are the commands that run on the server's settings
// whole (LoadSettings): a bad NAME_FILE of any setting stops them at
// start, named (fileEnv.check). The others are clients, which read their
// few settings (readEnv) and are not stopped by a server's broken one (a
// hook must still give its host the fallback, version still prints): a
// bad file one of them asks for is written out and reads as unset.
var settingsCommands = map[string]bool{"serve": true, "config": true, "audit": true}

// stopOnSignal is a context that ends at the first SIGINT or SIGTERM,
// which begins a graceful stop; that stop may wait on a store or a
// server that does not answer, so the signals' own handling is back
// before the context ends, and a second one ends the process at once.
func stopOnSignal() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		cancel()
	}()
	return ctx
}

const usage = `askbridge: let an AI agent stop and ask a human.

  askbridge serve                 run the bridge (embedded store; REDIS_URL, REDIS_SENTINEL_URL
                                  or REDIS_CLUSTER_URL for Redis)
  askbridge ask [flags]           ask a question and wait for the answer
  askbridge questions             list open questions
  askbridge show ID               print a question and the command for each way to answer it
  askbridge answer ID [flags]     answer a question
  askbridge decline ID            decline a question
  askbridge wait ID               wait for a question asked earlier and print its resume
  askbridge events [--follow]     print the event log
  askbridge people                list the configured people and groups
  askbridge mcp                   serve the MCP tools over stdio
  askbridge hook --host H         answer an agent host's permission hook (claude-code, codex)
  askbridge policy test [ASK.json] print which policy rule decides an ask, from the configuration
  askbridge audit verify [FILE...] check the event log's audit chain (the store's, or exports')
  askbridge config check          check the settings and the configuration file as serve does at start
  askbridge healthcheck [--live]  exit 0 when the local server is ready (--live: serving, for
                                  a container's health check)
  askbridge version               print the version

Exit codes:
  0  done; from ask and wait, answered (an approval approved as asked)
  1  an error, which stderr says
  2  bad usage: a flag or an argument, or a request the bridge refused
     as invalid (a route it does not have)
  3  ask, wait: declined
  4  ask, wait: timed out
  5  ask, wait: expired (the run it was bound to ended)
  6  ask, wait: cancelled
  7  ask, wait: an approval denied (a batch: no call approved)
  8  ask, wait: a batch partly approved (make only the calls approved)
  9  ask, wait: approved with arguments an approver changed (make the
     call as the resume gives it)
  10 the bridge was not reached, or said to try later: nothing answered,
     what is in front of it answered 502, 503 or 504, or it (or a proxy)
     answered 429, too many requests: the same command may work later
     (an ASKBRIDGE_URL whose host DNS does not know, or whose http or
     https is not the server's, exits 1: retrying will not mend it)
  11 the bridge refused the token (401) or what its role may do (403)
  78 serve: a setting or the configuration file refused (no restart
     mends it; a panic exits 2, which one may)
hook exits 0 or 1 alone, as its hosts read them; healthcheck 0 when
ready (--live: serving), 1 when not, 2 for bad usage.

Run "askbridge COMMAND -h" for a command's flags. See README.md for settings.
`

// Run is the program without the process: it returns the exit code.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return serve(ctx, rest, getenv, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "askbridge", versionString())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "audit", "config":
		// What they print is read by scripts too (a verify's --json
		// report, config check's "ok:"), so a stdout that failed fails
		// them as it fails the client commands.
		c := map[string]command{"audit": cmdAudit, "config": cmdConfig}[cmd]
		out := &checkedStdout{w: stdout}
		return out.exit(c(ctx, rest, getenv, stdin, out, stderr), stderr)
	}
	if c, ok := cliCommands[cmd]; ok {
		// The command's connections end with it (a test runs many in one
		// process, beside the server they reach).
		defer directTransport.CloseIdleConnections()
		out := &checkedStdout{w: stdout}
		return out.exit(c(ctx, rest, getenv, stdin, out, stderr), stderr)
	}
	fmt.Fprintf(stderr, "askbridge: unknown command %q\n\n%s", cmd, usage)
	return 2
}

func versionString() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
}

// refusedSetting marks an error of Main.Run that only a change of the
// settings mends (a file that sends to a surface not turned on): serve
// exits exitConfig for it, as for a setting refused before the start, so
// that a supervisor told not to restart on that code (the systemd unit's
// RestartPreventExitStatus) stops there instead of starting the same
// refusal every few seconds for ever. Every other failure to start (a
// store not reached yet) exits exitError, which is restarted.
type refusedSetting struct{ error }

func (r refusedSetting) Unwrap() error { return r.error }

func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	// serve has no flags, but -h is parsed as every command's is, so
	// "askbridge serve -h" prints its usage as the general usage promises.
	fs := newFlags("serve", stderr, "serve\n\nRuns the bridge. It takes no arguments: it is configured by environment variables (see README.md).")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "askbridge serve takes no arguments; it is configured by environment variables (see README.md)")
		return exitUsage
	}
	settings, err := LoadSettings(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "askbridge:", err)
		return exitConfig
	}
	log := newLogger(stderr, settings.LogFormat, settings.LogLevel)
	tr, err := openTracing(ctx, getenv, stderr, log)
	if err != nil {
		fmt.Fprintln(stderr, "askbridge:", err)
		return exitConfig
	}
	defer tr.close(log) // after Close: the last spans are sent
	hangups := make(chan os.Signal, 1)
	signal.Notify(hangups, syscall.SIGHUP)
	defer signal.Stop(hangups)
	m := &Main{Settings: settings, Stdout: stdout, Log: log, Hangups: hangups, Getenv: getenv, Tracing: tr.provider()}
	if err := m.Run(ctx); err != nil {
		log.Error().Err(err).Msg("cannot start")
		if errors.As(err, new(refusedSetting)) {
			return exitConfig
		}
		return exitError
	}
	select {
	case <-ctx.Done():
		log.Info().Msg("stopping")
	case <-m.Stopped():
		log.Error().Msg("a part of askbridge failed; stopping the rest")
	}
	if err := m.Close(); err != nil && !errors.Is(err, context.Canceled) {
		log.Error().Err(err).Msg("stopped with an error")
		return 1
	}
	return 0
}

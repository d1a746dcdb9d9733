package app

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

type command func(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int

// cliCommands are the commands that talk to a running server.
var cliCommands = map[string]command{
	"ask":       cmdAsk,
	"questions": cmdQuestions,
	"show":      cmdShow,
	"answer":    cmdAnswer,
	"decline":   cmdDecline,
	"wait":      cmdWait,
	"events":    cmdEvents,
	"people":    cmdPeople,
	"mcp":       cmdMCP,
	"hook":      cmdHook,
	"policy":    cmdPolicy,
}

// Exit codes: a script can branch on the outcome without parsing text.
// 3 to 9 are how a question closed, from ask and wait; 10 and 11 are
// why a command that reaches the bridge failed, from every such command
// but hook (whose host reads only 0 and 1) and mcp (a server, whose
// calls fail in their results). usage, in main.go, lists them all.
const (
	exitAnswered  = 0
	exitError     = 1
	exitUsage     = 2
	exitDeclined  = 3
	exitTimedOut  = 4
	exitExpired   = 5
	exitCancelled = 6
	exitDenied    = 7 // an approval answered with deny; a batch with no call approved
	// exitPartlyApproved is a batch with some calls approved and others
	// not: only the calls whose own results say approved may be made.
	exitPartlyApproved = 8
	// exitApprovedEdited is an approval (or a batch whose every call was
	// approved) approved only with arguments an approver changed: the
	// call to make is the approved one, in the resume, not the one asked.
	exitApprovedEdited = 9
	// exitUnreachable: no answer came from the bridge (nothing listens
	// at its address, the connection failed or timed out), what is in
	// front of it answered 502, 503 or 504 to the last try, or it (or a
	// proxy) answered 429, too many requests for now: the same command
	// may work later, and a script tries again on this code alone. An
	// ask that ends so may have been asked; stderr names the
	// --idempotency-key that gets it rather than asking again. An
	// address that no retry mends (client.AddressFault) is exitError
	// instead.
	exitUnreachable = 10
	// exitRefused: the bridge refused the token (401) or what its role
	// may do (403): a token to fix, which trying again will not.
	exitRefused = 11
	// exitConfig: serve refused a setting or its configuration file,
	// which no restart mends (sysexits' EX_CONFIG, as systemd names it).
	// Not exitUsage: Go exits 2 on a panic, which a supervisor should
	// restart, so the unit's RestartPreventExitStatus names this one.
	exitConfig = 78
)

// newClient reaches the server named by ASKBRIDGE_URL with ASKBRIDGE_TOKEN.
// With neither set it reaches the local server (ASKBRIDGE_ADDR) with the
// admin token from the local data directory, so the README's loop needs no
// set-up.
func newClient(getenv func(string) string) (*client.Client, error) {
	t, err := clientTarget(getenv)
	if err != nil {
		return nil, err
	}
	return t.client(), nil
}

// serverURL is the server the CLI talks to: ASKBRIDGE_URL, or the local
// server's address, a wildcard one (0.0.0.0:8080, as in the image) reached
// over loopback.
func serverURL(s Settings) string {
	if s.Client.URL != "" {
		return s.Client.URL
	}
	return "http://" + loopbackAddr(s.Addr)
}

// clientEnv is the CLI's own settings; they are plain strings, which
// cannot fail to read.
func clientEnv(getenv func(string) string) ClientSettings {
	s, _ := readEnv(getenv)
	return s.Client
}

// repeated collects a repeatable flag.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ", ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// duration is a flag of a duration in the forms every door reads
// (core.ParseDuration: "90s", "30m", "1d12h"), not Go's alone.
type duration time.Duration

func (d *duration) String() string {
	if d == nil || *d == 0 {
		return ""
	}
	return time.Duration(*d).String()
}
func (d *duration) Set(v string) error {
	parsed, err := core.ParseDuration(v)
	if err != nil {
		return errors.New("write " + core.DurationForms)
	}
	*d = duration(parsed)
	return nil
}

// durationFlag defines a duration flag (see duration) on fs.
func durationFlag(fs *flag.FlagSet, name string, usage string) *duration {
	d := new(duration)
	fs.Var(d, name, usage)
	return d
}

func newFlags(name string, stderr io.Writer, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: askbridge %s\n\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// noArgs refuses what is left after fs's flags, for a command that takes
// no arguments: a stray word (a flag typed without its dashes, say)
// ignored would run something other than what was meant.
func noArgs(fs *flag.FlagSet, stderr io.Writer) bool {
	if fs.NArg() == 0 {
		return true
	}
	fmt.Fprintf(stderr, "askbridge %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
	return false
}

// fail prints an error the way every command does and returns exitError:
// prefixed once (the API client's errors begin with "askbridge: "
// already), with any control character in it escaped, since a refusal's
// message may quote a server's or a proxy's words.
func fail(stderr io.Writer, err error) int {
	fmt.Fprintln(stderr, "askbridge:", terminalText(strings.TrimPrefix(err.Error(), "askbridge: "), ""))
	return exitError
}

// callFailed prints err, from a call to the bridge, as fail does, and
// returns the exit code of its kind (callExit). An address that no
// retry mends is named as the setting to fix.
func callFailed(ctx context.Context, stderr io.Writer, err error) int {
	fail(stderr, err)
	code := callExit(ctx, err)
	if why := client.AddressFault(err); why != "" && ctx.Err() == nil {
		fmt.Fprintf(stderr, "askbridge: check ASKBRIDGE_URL, the bridge's address: %s\n", why)
	}
	return code
}

// callExit is the exit code of err, from a call to the bridge: the
// bridge not reached or asking to be tried later (exitUnreachable), the
// token refused (exitRefused), the request refused as invalid
// (exitUsage: a route not configured, an option the question does not
// have, which the CLI cannot check before it sends them, are bad usage
// as those it can check are), or another error. ctx is the command's:
// once it has ended (Ctrl-C, SIGTERM), the command was stopped, an error
// whatever the last try met. A certificate that does not verify, and an
// address that is wrong (client.AddressFault), are no outage to wait out.
func callExit(ctx context.Context, err error) int {
	if ctx.Err() != nil {
		return exitError
	}
	if e, ok := errors.AsType[*client.Error](err); ok {
		if e.Code == string(core.CodeInvalid) {
			return exitUsage
		}
		switch e.Status {
		case http.StatusUnauthorized, http.StatusForbidden:
			return exitRefused
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			// A 429 refuses for a while, not for good (the bridge's
			// own names its Retry-After), as a 503 does.
			return exitUnreachable
		}
		return exitError
	}
	if _, bad := errors.AsType[*tls.CertificateVerificationError](err); bad {
		return exitError
	}
	if client.AddressFault(err) != "" {
		return exitError
	}
	if _, noAnswer := errors.AsType[*url.Error](err); noAnswer {
		return exitUnreachable
	}
	return exitError
}

// checkedStdout is a command's stdout that remembers its first failed
// write: a script reads what a command prints (an id, a resume, a list),
// so a command that could not print it has failed, whatever it returns.
type checkedStdout struct {
	w   io.Writer
	err error
}

func (c *checkedStdout) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// exit is code, the command's, unless stdout failed and the command
// said nothing of it (it returned neither exitError nor exitUsage): then
// it says so and returns exitError.
func (c *checkedStdout) exit(code int, stderr io.Writer) int {
	if c.err == nil || code == exitError || code == exitUsage {
		return code
	}
	return fail(stderr, fmt.Errorf("writing to stdout: %w", c.err))
}

// subcommand reports whether args begin with sub, the one subcommand of
// a command (audit verify, config check, policy test); else it prints
// the command's usage, synopsis.
func subcommand(args []string, sub, synopsis string, stderr io.Writer) bool {
	if len(args) > 0 && args[0] == sub {
		return true
	}
	fmt.Fprintf(stderr, "usage: askbridge %s\n", synopsis)
	return false
}

// parseWithID parses "ID [flags]" or "[flags] ID".
func parseWithID(fs *flag.FlagSet, args []string, stderr io.Writer) (core.QuestionID, bool) {
	var id string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return "", false
	}
	if id == "" && fs.NArg() == 1 {
		id = fs.Arg(0)
	} else if !noArgs(fs, stderr) {
		return "", false
	}
	if id == "" {
		fs.Usage()
		return "", false
	}
	return core.QuestionID(id), true
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

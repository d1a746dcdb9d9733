package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/askbridge/askbridge/adapters/hooks"
	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
)

// maxHookInput caps what is read from the host on stdin: the door's own
// cap, so an input it would refuse is refused here, before the upload.
const maxHookInput = hooks.MaxInputBytes

// hookSynopsis is how the hook command is written: in its usage, and in
// the reason a host is given when its hook command is written wrong.
const hookSynopsis = "hook --host claude-code|codex [--route R] [--wait D]"

// cmdHook is a command hook for an agent host: it reads the host's hook
// input on stdin, asks askbridge (POST /v1/hooks/{host}), waits, and
// prints the host's decision on stdout. An empty stdout with exit 0 is no
// decision: the host asks at the keyboard. A failure exits 1, which both
// hosts read as a hook error that decides nothing, except for a prompt
// whose host would then leave the call to its own rules (failedAsk), a
// hook command written wrong included once its --host is known; never 2,
// which Claude Code reads as a deny.
func cmdHook(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("hook", stderr, hookSynopsis+"  (hook input on stdin)")
	host := fs.String("host", "", "the agent host that runs this hook: claude-code or codex")
	route := fs.String("route", "", "the route to ask on (default: the default route)")
	wait := durationFlag(fs, "wait", "how long to wait for an answer before leaving the prompt to the host (default and most: the server's max wait); keep it under the hook's timeout")
	usage := fs.Parse(args)
	if errors.Is(usage, flag.ErrHelp) {
		return exitError
	}
	if usage == nil && fs.NArg() > 0 {
		usage = fmt.Errorf("unexpected argument %q (the hook input comes on stdin)", fs.Arg(0))
	}
	hostName := *host
	if usage != nil {
		// Parsing stopped at the bad flag, perhaps before --host.
		hostName = flagValue(args, "host")
	}
	h, err := hooks.ParseHost(hostName)
	if err != nil {
		if usage != nil {
			return fail(stderr, &hooks.Usage{Synopsis: hookSynopsis, Err: usage})
		}
		return fail(stderr, fmt.Errorf("hook: --host: %s", core.ErrorMessage(err)))
	}
	body, err := io.ReadAll(io.LimitReader(stdin, maxHookInput+1))
	if err != nil {
		return fail(stderr, fmt.Errorf("hook: reading stdin: %w", err))
	}
	p := hookPrompt(h, body)
	failed := failedAsk(p, stdout, stderr)
	if usage != nil {
		// A hook command written wrong still owes the host its fallback:
		// exit 1 alone would leave a PreToolUse call to the host's own
		// rules, which may run it unasked. Its reason says what to fix.
		return failed(&hooks.Usage{Synopsis: hookSynopsis, Err: usage})
	}
	if len(body) > maxHookInput {
		return failed(core.Errorf(core.CodeInvalid, "hook", "the hook input is larger than %d bytes", maxHookInput))
	}
	target, err := clientTarget(getenv)
	if err != nil {
		return failed(err)
	}
	q := url.Values{}
	if *route != "" {
		q.Set("route", *route)
	}
	if *wait > 0 {
		q.Set("wait", wait.String())
	}
	u := strings.TrimSuffix(target.base, "/") + "/v1/hooks/" + url.PathEscape(string(h))
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	// The request outlives ctx by a moment: when the host kills the hook
	// (the person answered at the keyboard), the question is withdrawn
	// before this process exits.
	reqCtx, cancelReq := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReq()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, u, strings.NewReader(string(body)))
	if err != nil {
		return failed(err)
	}
	req.Header.Set("Authorization", "Bearer "+target.token)
	req.Header.Set("Content-Type", "application/json")
	// --wait bounds only the server's side: a server that takes the
	// request and never answers (a hung replica, a proxy whose upstream
	// hangs) would keep the hook until the host kills it, which then
	// prints no decision at all. So the hook gives up on its own: on the
	// status and question id, which the server sends as soon as the ask
	// is stored (hookHeaderTimeout), and on the decision, once the wait
	// is past by hookSlack. Giving up on the decision, it still hands
	// over a deny already recorded (settle).
	bound := hookMaxWait
	if *wait > 0 {
		bound = min(time.Duration(*wait), hookMaxWait)
	}
	bound += hookSlack
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	// lost ends the hook whose answer did not come (see settle): a
	// person's deny already recorded is still handed over.
	lost := func(id core.QuestionID, why error, late string) int {
		return settle(target, p, id, lostAnswer{why: why, late: late}, stdout, stderr, failed)
	}
	type result struct {
		resp *http.Response
		err  error
	}
	sent := make(chan result, 1)
	go func() {
		resp, err := target.hookHTTP().Do(req)
		sent <- result{resp, err}
	}()
	var resp *http.Response
	select {
	case r := <-sent:
		if r.err != nil {
			return failed(&hooks.Unreached{Server: target.base, Err: r.err})
		}
		resp = r.resp
	case <-deadline.C:
		// No id yet: dropping the request withdraws it on the server.
		cancelReq()
		return failed(&hooks.Unreached{Server: target.base, Err: fmt.Errorf("no decision within %s", bound)})
	case <-ctx.Done():
		// Killed before the server even answered with the question's id:
		// dropping the request withdraws it on the server.
		cancelReq()
		return exitError
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		refusal := errors.New(responseError(resp))
		if resp.StatusCode == http.StatusTooManyRequests {
			// This address held off (by a proxy before askbridge; the
			// door answers its own as FailedAsk says): the agent can
			// bring that about, so it is no way around the hook
			// (hooks.Held).
			refusal = hooks.Held(refusal)
		}
		return failed(&hooks.Unreached{Server: target.base, Refused: true, Err: refusal})
	}
	id := core.QuestionID(resp.Header.Get(hooks.HeaderQuestionID))
	read := make(chan result, 1)
	var out []byte
	go func() {
		var err error
		// Read past the bound by a byte, so that a body over it is told
		// from one at it (hooks.CheckReply).
		out, err = io.ReadAll(io.LimitReader(resp.Body, hooks.MaxOutputBytes+1))
		read <- result{err: err}
	}()
	select {
	case r := <-read:
		if r.err != nil {
			// The server went away mid-wait, perhaps as it wrote a deny.
			return lost(id, fmt.Errorf("reading the decision: %w", r.err), fmt.Sprintf("(reading it failed: %v)", r.err))
		}
	case <-deadline.C:
		return lost(id, fmt.Errorf("no decision within %s", bound), "within "+bound.String())
	case <-ctx.Done():
		cancelReq()
		withdraw(target, id, hooks.ReasonHostStopped, stderr)
		return exitError
	}
	if err := hooks.CheckReply(p, out); err != nil {
		// Not the door's answer: what answered is not askbridge, or not
		// askbridge alone. The host gets what a server down gets.
		return failed(&hooks.Unreached{Server: target.base, Err: err})
	}
	if _, err := stdout.Write(out); err != nil {
		return fail(stderr, err)
	}
	return 0
}

// How long the hook waits for the server, whatever --wait says (see
// cmdHook). Variables so that the tests need not wait.
var (
	// hookHeaderTimeout bounds the wait for the status and question id,
	// which the server sends once the ask is stored: milliseconds, or a
	// few seconds while a store fails over.
	hookHeaderTimeout = 15 * time.Second
	// hookMaxWait is the longest wait the server's hook door takes, and
	// its wait when --wait is absent.
	hookMaxWait = httpapi.DefaultMaxWait
	// hookSlack is how long past its wait the hook waits for the
	// decision: the server's withdrawal and its answer. The wait and this
	// stay under the hook timeout README suggests (330 s).
	hookSlack = 15 * time.Second
)

// flagValue is the value args give flag name (-name V, --name=V, ...),
// found without parsing them whole: for when the parse failed, perhaps
// before it reached name. The last one given counts, as in a parse.
func flagValue(args []string, name string) string {
	var v string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		f := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if f == a {
			continue
		}
		if k, val, ok := strings.Cut(f, "="); ok && k == name {
			v = val
		} else if f == name && i+1 < len(args) {
			v = args[i+1]
			i++
		}
	}
	return v
}

// hookPrompt is the prompt of the hook input body, as far as the command
// reads it: an input that does not parse is taken as the event it
// declares (hooks.Sniff), so a malformed PreToolUse input is not let
// through.
func hookPrompt(h hooks.Host, body []byte) hooks.Prompt {
	p, err := hooks.Parse(h, body)
	if err != nil {
		p = hooks.Sniff(h, body)
	}
	return p
}

// failedAsk returns how the hook ends when the prompt p could not be
// asked: where hooks.FailedAsk has an answer for it (a PreToolUse
// prompt, whose host reads a failed hook as leaving the call to its own
// permission rules), that answer on stdout and exit 0, the reason on
// stderr too; for any other prompt, exit 1 with the reason on stderr.
func failedAsk(p hooks.Prompt, stdout, stderr io.Writer) func(error) int {
	return func(err error) int {
		out, ok := hooks.FailedAsk(p, err)
		if !ok {
			return fail(stderr, err)
		}
		fmt.Fprintln(stderr, "askbridge:", err)
		if _, werr := stdout.Write(out); werr != nil {
			return fail(stderr, werr)
		}
		return 0
	}
}

// withdraw cancels the hook's question, for reason.
func withdraw(target target, id core.QuestionID, reason string, stderr io.Writer) {
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := target.client().Cancel(ctx, id, reason)
	if err != nil && !closedAlready(err) {
		fmt.Fprintln(stderr, "askbridge: hook: withdrawing", string(id)+":", err)
	}
}

// responseError is the message of an API error response.
func responseError(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var eb client.ErrorBody
	if json.Unmarshal(b, &eb) == nil && eb.Error.Message != "" {
		return fmt.Sprintf("%s (%d)", eb.Error.Message, resp.StatusCode)
	}
	return fmt.Sprintf("the server answered %s", resp.Status)
}

// target is the server the CLI talks to, the token it presents, and
// whether that is the local admin token read from the data directory.
type target struct {
	base, token string
	local       bool
}

// clientTarget is the server and token the CLI uses (see newClient):
// ASKBRIDGE_TOKEN, or, for a server on this machine only, the local
// admin token from the data directory, which must never be sent to
// another host that ASKBRIDGE_URL names, nor to a proxy.
func clientTarget(getenv func(string) string) (target, error) {
	s, err := readEnv(getenv)
	if err != nil {
		return target{}, err
	}
	t := target{base: serverURL(s), token: s.Client.Token.Reveal()}
	if u, err := url.Parse(t.base); s.Client.URL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		// Said here, as the setting to fix: sent, it would fail as a
		// bridge that cannot be reached does, which a script tries again.
		// The URL is not quoted: it may hold a password.
		return target{}, errors.New("ASKBRIDGE_URL is not an http:// or https:// URL with a host, such as http://askbridge.internal:8080")
	}
	if t.token == "" {
		if !onThisMachine(t.base) {
			return target{}, fmt.Errorf("no ASKBRIDGE_TOKEN for the server at ASKBRIDGE_URL: set it (the local admin token goes only to a server on this machine)")
		}
		path := filepath.Join(s.DataDir, "admin.token")
		b, err := os.ReadFile(path)
		if err != nil {
			return target{}, fmt.Errorf("no ASKBRIDGE_TOKEN, and no local admin token (%v): start the server with 'askbridge serve' or set ASKBRIDGE_URL and ASKBRIDGE_TOKEN", err)
		}
		t.token, t.local = strings.TrimSpace(string(b)), true
	}
	return t, nil
}

// http is the HTTP client requests to t go through: with the local admin
// token, straight to this machine, whatever HTTP_PROXY says (Go's proxy
// rules pass loopback by, but not a wildcard address such as 0.0.0.0);
// else the default, which honours the proxy variables.
func (t target) http() *http.Client {
	if t.local {
		return &http.Client{Transport: directTransport}
	}
	return http.DefaultClient
}

// hookHTTP is t's HTTP client with hookHeaderTimeout on its responses'
// headers.
func (t target) hookHTTP() *http.Client {
	tr := http.DefaultTransport.(*http.Transport)
	if t.local {
		tr = directTransport
	}
	tr = tr.Clone()
	tr.ResponseHeaderTimeout = hookHeaderTimeout
	return &http.Client{Transport: tr}
}

// client is the API client of t.
func (t target) client() *client.Client {
	return client.New(t.base, t.token, client.WithHTTPClient(t.http()), client.WithRetryPause(cliRetryPause))
}

// cliRetryPause, when set, is the first pause of the CLI client's
// retries; zero leaves the client's own. The tests shorten it.
var cliRetryPause time.Duration

// directTransport is the default transport without a proxy: the local
// admin token's requests go through it.
var directTransport = func() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	return tr
}()

// onThisMachine reports whether base names this machine: a loopback
// host, or none or an unspecified address (ASKBRIDGE_ADDR ":8080"),
// which a client dials on this machine.
func onThisMachine(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "" || loopbackHost(h) {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsUnspecified()
}

// loopbackHost reports whether host names this machine's loopback.
func loopbackHost(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

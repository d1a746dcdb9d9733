package discord

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/discord/discordfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestRefusedGatewayStopsRun: a bot token Discord refuses (a 401 from
// the gateway's discovery, or the gateway closing with 4004), or a
// gateway closed with a code Discord says never to reconnect after
// (4014: intents the application may not use), ends Run with an error
// that says so, with or without the gateway lease, as Telegram's Run
// ends for a token Telegram refuses: the program stops, rather than
// running half-configured. Before, the adapter tried again every minute
// for as long as it ran, each try an identify with the refused token,
// and no click ever arrived.
func TestRefusedGatewayStopsRun(t *testing.T) {
	for name, tc := range map[string]struct {
		token  string // "" is the fake's own
		code   int    // the gateway's close at IDENTIFY; 0 for none
		reason string
		want   string
		leased bool
	}{
		"token refused at discovery":         {token: "reset-long-ago", want: "401"},
		"token refused at identify":          {code: 4004, reason: "Authentication failed.", want: "4004 (Authentication failed.)"},
		"token refused under the lease":      {code: 4004, reason: "Authentication failed.", want: "4004", leased: true},
		"intents the app may not use":        {code: 4014, reason: "Disallowed intent(s).", want: "4014 (Disallowed intent(s).)"},
		"intents refused under the lease":    {code: 4014, reason: "Disallowed intent(s).", want: "4014", leased: true},
		"token refused at discovery, leased": {token: "reset-long-ago", want: "401", leased: true},
	} {
		t.Run(name, func(t *testing.T) {
			fake := discordfake.New()
			t.Cleanup(fake.Close)
			if tc.code != 0 {
				fake.CloseNextIdentify(tc.code, tc.reason)
			}
			token := fake.Token
			if tc.token != "" {
				token = tc.token
			}
			svc, _ := coretest.Open(t, coretest.Options{})
			o := Options{Token: token, APIURL: fake.APIURL(), Gateway: true, Log: zerolog.Nop()}
			if tc.leased {
				o.Leases, o.Owner = svc.Values(), "replica-1"
			}
			a, err := New(svc, o)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- a.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
			select {
			case err := <-done:
				done <- err // for the cleanup
				if !errors.Is(err, errRefused) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Run ended with %v; want Discord's refusal, naming %q", err, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("Run still going 10s after Discord refused the gateway for good (%d identifies, %d connected)",
					len(fake.Identified()), fake.Connected())
			}
		})
	}
}

// TestGatewayClosedForAFaultIsOpenedAgain: a close Discord asks the
// client to reconnect after (4000, an unknown error of its own) is no
// refusal: the adapter connects again, after the shortest pause (the
// test's, which passes no real second), and Run goes on.
func TestGatewayClosedForAFaultIsOpenedAgain(t *testing.T) {
	fake := discordfake.New()
	t.Cleanup(fake.Close)
	fake.CloseNextIdentify(4000, "Unknown error.")
	svc, _ := coretest.Open(t, coretest.Options{})
	a, err := New(svc, Options{Token: fake.Token, APIURL: fake.APIURL(), Gateway: true,
		Leases: svc.Values(), Owner: "replica-1", LeaseTTL: loops.DefaultLeaseTTL, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	paused := make(chan time.Duration, 1)
	a.sleep = func(ctx context.Context, d time.Duration) bool {
		select {
		case paused <- d:
		default:
		}
		return ctx.Err() == nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	if !fake.WaitFor(10*time.Second, func() bool { return fake.Connected() == 1 }) {
		t.Fatal("the adapter did not connect again after a close it may reconnect after")
	}
	select { // the pause came before the connection it waited for
	case got := <-paused:
		if got != gatewayMinWait {
			t.Errorf("paused %v before connecting again; want %v", got, gatewayMinWait)
		}
	default:
		t.Error("connected again without a pause")
	}
	select {
	case err := <-done:
		t.Fatalf("Run ended after a close it may reconnect after: %v", err)
	default:
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run stopped with %v", err)
	}
}

// TestRefusedRequestsArePermanent: a request Discord refuses with a 4xx
// other than 429 is permanent, whatever the delivery: a 401 (the bot
// token refused: wrong, or reset), a 405, a 413. Sending it again cannot
// help, and each refusal counts towards Cloudflare's ban of an IP that
// makes 10,000 invalid requests (401, 403, 429) in ten minutes. Before,
// 400, 403 and 404 alone were: a 401 came back not sent, and the outbox
// sent every card again and again until it gave up on it, hundreds of
// invalid requests an hour from a bridge whose token had been reset.
func TestRefusedRequestsArePermanent(t *testing.T) {
	for status, body := range map[int]string{
		http.StatusUnauthorized:          `{"message": "401: Unauthorized", "code": 0}`,
		http.StatusMethodNotAllowed:      `{"message": "405: Method Not Allowed", "code": 0}`,
		http.StatusRequestEntityTooLarge: `{"message": "Request entity too large", "code": 40005}`,
	} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			fake := discordfake.New()
			t.Cleanup(fake.Close)
			a, err := New(nil, Options{Token: fake.Token, APIURL: fake.APIURL(), Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			q := &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "a", Text: "?", State: core.StateOpen}
			for what, try := range map[string]func() error{
				"a post": func() error {
					fake.Fail(http.MethodPost, "channels/111/messages", status, body, nil)
					_, err := a.Post(ctx, q, core.MessageRef{Room: "111", Kind: core.DeliverPost})
					return err
				},
				"an edit": func() error {
					fake.Fail(http.MethodPatch, "channels/111/messages/222", status, body, nil)
					return a.Update(ctx, q, core.MessageRef{Room: "111", ID: "222", Kind: core.DeliverPost})
				},
				"a DM's opening": func() error {
					fake.Fail(http.MethodPost, "users/@me/channels", status, body, nil)
					_, err := a.Post(ctx, q, core.MessageRef{Room: core.DMRoom(alice.ID), Kind: core.DeliverPost})
					return err
				},
				"a reminder": func() error {
					fake.Fail(http.MethodPost, "channels/111/messages", status, body, nil)
					return a.Remind(ctx, q, "111")
				},
			} {
				var perm *core.Permanent
				if err := try(); !errors.As(err, &perm) {
					t.Errorf("%s refused with %d: %v (%T); want permanent", what, status, err, err)
				}
			}
		})
	}
}

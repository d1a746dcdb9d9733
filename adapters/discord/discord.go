// Package discord is askbridge's Discord surface: questions become
// messages with component buttons, free text comes in through modals, and
// clicks arrive over the gateway or the HTTP interactions endpoint. Every
// click is handed to core, which alone decides and records; the adapter
// only translates.
package discord

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/bwmarrin/discordgo"
	"github.com/rs/zerolog"
)

// DefaultAPIURL is Discord's REST API base.
const DefaultAPIURL = "https://discord.com/api/v10/"

// Options configure the adapter.
type Options struct {
	// Token is the bot token (a "Bot " prefix is accepted and dropped).
	Token string
	// AppID, when set, must match every interaction's application id.
	AppID string
	// PublicKey verifies the HTTP interactions endpoint. Without it the
	// endpoint is not mounted.
	PublicKey ed25519.PublicKey
	// APIURL is the REST base the SDK's requests are sent to; "" is
	// DefaultAPIURL. Tests point it at a fake.
	APIURL string
	// Gateway connects to the gateway to receive interactions. Off, clicks
	// come only through the HTTP endpoint.
	Gateway bool
	// Leases, when set, keeps the gateway on one replica at a time: the one
	// holding the lease (loops.Leader) under Owner. Every gateway connection
	// receives every click, so without it each replica that connects
	// handles each click (once, thanks to FirstSeen, but with work wasted).
	Leases loops.Leases
	// Owner names this replica for the gateway lease.
	Owner string
	// LeaseTTL is the gateway lease's life unrenewed; default
	// loops.DefaultLeaseTTL.
	LeaseTTL time.Duration
	// RatePerSecond caps REST calls of the courier (Discord's global
	// limit is 50/s per bot); 0 is 45, under the limit with room for the
	// interaction callbacks, which do not count against it.
	RatePerSecond int
	// Now is the wall clock for the signature timestamp check; nil is
	// time.Now.
	Now func() time.Time
	Log zerolog.Logger
}

// Adapter is the Discord courier and inbound transport.
type Adapter struct {
	svc    *core.Service
	s      *discordgo.Session
	opts   Options
	log    zerolog.Logger
	now    func() time.Time
	bucket *tokenBucket
	// dropped is signalled when the gateway connection ends (connect).
	dropped chan struct{}
	// sleep is the pause between tries to open the gateway (connect), a
	// test's to replace so that it waits none out.
	sleep func(ctx context.Context, d time.Duration) bool
}

var _ core.ChatAdapter = (*Adapter)(nil)

// New builds the adapter; nothing is dialled until Run.
func New(svc *core.Service, o Options) (*Adapter, error) {
	tok := strings.TrimSpace(strings.TrimPrefix(o.Token, "Bot "))
	if tok == "" {
		return nil, errors.New("discord: a bot token is required")
	}
	if o.APIURL == "" {
		o.APIURL = DefaultAPIURL
	}
	base, err := url.Parse(o.APIURL)
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("discord: API URL %q is not an http(s) URL", o.APIURL)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	if o.PublicKey != nil && len(o.PublicKey) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("discord: the public key is %d bytes; an Ed25519 key is %d", len(o.PublicKey), ed25519.PublicKeySize)
	}
	if o.RatePerSecond <= 0 {
		o.RatePerSecond = 45
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s, err := discordgo.New("Bot " + tok)
	if err != nil {
		return nil, err
	}
	// A 429 comes back as *RateLimitError instead of an uncapped sleep
	// inside the SDK; core's outbox waits and retries.
	s.ShouldRetryOnRateLimit = false
	// discordgo v0.29.0 sends a request again after a 502, which Discord
	// may answer after it made the message: the second copy would be
	// recorded as the card, the first never edited nor flagged. With no
	// retries a 502 comes back as an error of unknown outcome (classify),
	// and the outbox's retry marks its card as a possible repeat (law 4).
	// 429s are apart from this (ShouldRetryOnRateLimit).
	s.MaxRestRetries = 0
	// The gateway is reconnected by connect, which stops with Run; the
	// SDK's loop did not (see gateway.go).
	s.ShouldReconnectOnError = false
	s.Client = &http.Client{Timeout: 20 * time.Second, Transport: &rewrite{to: base, next: http.DefaultTransport, now: o.Now}}
	// Interactions need no intent; Guilds is the smallest useful set.
	s.Identify.Intents = discordgo.IntentsGuilds
	s.StateEnabled = false
	routeSDKLogs(o.Log)
	a := &Adapter{
		svc: svc, s: s, opts: o, log: o.Log, now: o.Now,
		bucket:  newTokenBucket(o.RatePerSecond, o.Now),
		dropped: make(chan struct{}, 1),
		sleep:   loops.Sleep,
	}
	return a, nil
}

// discordgo logs through one package variable; it is pointed once at the
// latest adapter's logger, so its errors land in askbridge's log instead
// of bare lines on stderr. Only its error and warning levels are enabled,
// and those carry no tokens.
var (
	sdkLogOnce sync.Once
	sdkLog     atomic.Pointer[zerolog.Logger]
)

func routeSDKLogs(l zerolog.Logger) {
	sdkLog.Store(&l)
	sdkLogOnce.Do(func() {
		discordgo.Logger = func(level, _ int, format string, args ...any) {
			l := sdkLog.Load()
			ev := l.Debug()
			switch level {
			case discordgo.LogError:
				ev = l.Error()
			case discordgo.LogWarning:
				ev = l.Warn()
			}
			ev.Str("sdk", "discordgo").Msg(fmt.Sprintf(format, args...))
		}
	})
}

// Session is the SDK session, for tests.
func (a *Adapter) Session() *discordgo.Session { return a.s }

// Surface is Discord.
func (a *Adapter) Surface() core.Surface { return core.SurfaceDiscord }

// rewrite sends the SDK's requests to the configured API base. discordgo
// builds every URL from package variables fixed at init (the v9 API on
// discord.com); swapping the prefix per request keeps those globals alone.
// It also notes, for the request's own error path, what an answer says
// about waiting (notePushback), which the SDK's errors do not carry.
type rewrite struct {
	to   *url.URL
	next http.RoundTripper
	now  func() time.Time
}

func (t *rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	rest, ok := strings.CutPrefix(r.URL.String(), discordgo.EndpointAPI)
	if !ok {
		return t.next.RoundTrip(r)
	}
	u, err := url.Parse(t.to.String() + rest)
	if err != nil {
		return nil, err
	}
	r2 := r.Clone(r.Context())
	r2.URL, r2.Host = u, ""
	resp, err := t.next.RoundTrip(r2)
	if err == nil {
		notePushback(r2, resp, t.now())
	}
	return resp, err
}

// Post puts q's card in a channel.
func (a *Adapter) Post(ctx context.Context, q *core.Question, ref core.MessageRef) (core.MessageRef, error) {
	ch, err := a.channel(ctx, ref.Room)
	if err != nil {
		return core.MessageRef{}, err
	}
	ctx, pb := watch(ctx)
	m, err := a.sendMessage(ctx, ch, RenderPost(card.New(q, ref)))
	if err != nil {
		return core.MessageRef{}, a.classify(opened(err, ch, ref.Room), pb)
	}
	ref.Surface, ref.Room, ref.ID = core.SurfaceDiscord, ch, m.ID
	return ref, nil
}

// channel is the channel a delivery's room names: the room itself, or
// for a person's DM room the DM channel Discord opens (or returns again)
// for that user.
func (a *Adapter) channel(ctx context.Context, room string) (string, error) {
	user, ok := core.DMUser(room)
	if !ok {
		return room, nil
	}
	// A request of its own, against the bot's rate like the post after
	// it (rest; Budgets spends the bot-wide budget for it too).
	ctx, pb := watch(ctx)
	ch, err := a.openDM(ctx, user)
	if err != nil {
		err = a.classify(err, pb)
		var ra *core.RetryAfter
		var perm *core.Permanent
		if errors.As(err, &ra) || errors.As(err, &perm) {
			return "", err
		}
		// Whatever became of the opening (a 502 is not sent again), no
		// message was made: the delivery sent nothing, and its retry is
		// no possible repeat.
		return "", &core.NotSent{Err: err}
	}
	return ch.ID, nil
}

// opened is err of a post into ch, the channel room names. When a DM
// channel was opened for it first (ch is not room), the opening was a
// request, so the call was not without one: a route wait of its post is
// no longer core.Unspent, and the drain keeps all it spent for the call
// rather than give back the opening's send with the post's.
func opened(err error, ch, room string) error {
	var un *core.Unspent
	if ra, ok := errors.AsType[*core.RetryAfter](err); ok && ch != room && errors.As(err, &un) {
		return &core.RetryAfter{After: ra.After, Err: un.Err}
	}
	return err
}

// Update edits a card to show q as it stands.
func (a *Adapter) Update(ctx context.Context, q *core.Question, ref core.MessageRef) error {
	ctx, pb := watch(ctx)
	return a.classify(a.editMessage(ctx, RenderEdit(card.New(q, ref), ref)), pb)
}

// Remind posts a reminder of an open question.
func (a *Adapter) Remind(ctx context.Context, q *core.Question, room string) error {
	ch, err := a.channel(ctx, room)
	if err != nil {
		return err
	}
	ctx, pb := watch(ctx)
	_, err = a.sendMessage(ctx, ch, RenderReminder(card.Reminder(a.svc, q, core.SurfaceDiscord, ch)))
	return a.classify(opened(err, ch, room), pb)
}

// Digest posts a "while you were away" summary.
func (a *Adapter) Digest(ctx context.Context, d core.Digest, room string) error {
	ch, err := a.channel(ctx, room)
	if err != nil {
		return err
	}
	ctx, pb := watch(ctx)
	_, err = a.sendMessage(ctx, ch, RenderDigest(d))
	return a.classify(opened(err, ch, room), pb)
}

// classify is the package's classify, and besides, a 429 that holds back
// the whole bot (botWide429) holds back every later request of the
// courier until its wait is over, whatever room it is for
// (tokenBucket.hold): Discord's global limit and Cloudflare's ban of the
// IP refuse them all, and each refusal counts towards the ban (10,000
// invalid requests in ten minutes). It is logged once for each time the
// courier is held.
func (a *Adapter) classify(err error, pb *pushback) error {
	err = classify(err, pb)
	var ra *core.RetryAfter
	if pb.limitedBotWide() && errors.As(err, &ra) && a.bucket.hold(a.now().Add(ra.After)) {
		a.log.Warn().Dur("retry_in", ra.After).Msg("discord: the bot as a whole is rate limited (the global limit, or Cloudflare's ban); nothing is sent until it lifts")
	}
	return err
}

// classify maps the SDK's errors to what core's outbox understands: slow
// down, give up, or try again later. pb is what the transport noted of
// the call's answer (watch): a 429 is a wait and nothing posted whatever
// its body (Cloudflare's ban answers in HTML, which the SDK fails to
// decode), waiting the longer of the Retry-After header's and the JSON
// body's retry_after, a second when neither names one. A 5xx naming a
// wait stays of unknown outcome, the wait carried (serverBusy).
func classify(err error, pb *pushback) error {
	if err == nil {
		return nil
	}
	var rl *discordgo.RateLimitError
	if limited := errors.As(err, &rl); limited || pb.limited() {
		var after time.Duration
		if pb != nil {
			after = pb.after
		}
		if limited && rl.RateLimit != nil && rl.TooManyRequests != nil {
			after = max(after, rl.RetryAfter)
		}
		if after <= 0 {
			after = time.Second
		}
		return &core.RetryAfter{After: after, Err: err}
	}
	var re *discordgo.RESTError
	if errors.As(err, &re) {
		if re.Message != nil {
			switch re.Message.Code {
			case discordgo.ErrCodeUnknownChannel, discordgo.ErrCodeUnknownMessage,
				discordgo.ErrCodeMissingAccess, discordgo.ErrCodeMissingPermissions:
				return &core.Permanent{Err: err}
			}
		}
		if re.Response != nil {
			if st := re.Response.StatusCode; st >= 400 && st < 500 && st != http.StatusRequestTimeout {
				// The request itself is refused (its body, the bot
				// token, a permission, a channel or message gone; 429s
				// were taken above): sending it again cannot help, and
				// each refusal counts towards Cloudflare's ban of an IP
				// that makes too many invalid requests (401, 403, 429).
				return &core.Permanent{Err: err}
			}
			if re.Response.StatusCode < 500 {
				// Discord answered and refused: nothing was posted. (A
				// 5xx may come after the message was made.)
				return &core.NotSent{Err: err}
			}
		}
	}
	if pb.busy() {
		// No RetryAfter: core would read it as nothing posted.
		return &serverBusy{Status: pb.status, After: pb.after, Err: err}
	}
	return err
}

// tokenBucket keeps the courier under Discord's global request rate:
// each of its REST requests takes a token (rest), and one not sent after
// all gives it back. discordgo's limiter keeps the per-route buckets
// from headers (takeRoute).
type tokenBucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
	now    func() time.Time
	// until is when a bot-wide 429 stops holding the courier back
	// (hold); zero or past, nothing holds it.
	until time.Time
}

// errHeld is why a request was not sent: the bot as a whole is rate
// limited (Adapter.classify).
var errHeld = errors.New("discord: not sent while the bot as a whole is rate limited")

// hold holds every request back until t, and reports whether the courier
// was not held already (so the caller logs each hold once).
func (b *tokenBucket) hold(t time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	fresh := !b.now().Before(b.until)
	if t.After(b.until) {
		b.until = t
	}
	return fresh
}

func newTokenBucket(perSecond int, now func() time.Time) *tokenBucket {
	return &tokenBucket{rate: float64(perSecond), burst: float64(perSecond), tokens: float64(perSecond), last: now(), now: now}
}

// wait takes a token, waiting for one if none is left. While held
// (hold) it takes none and returns at once a core.RetryAfter for the rest
// of the hold: the outbox keeps the delivery until then, and nothing is
// sent meanwhile. A wait that ctx ends (a stopping drain) sent nothing
// either, and says so (core.NotSent): a bare context error is of unknown
// outcome to core, whose retry of a post would then be flagged as a
// possible repeat of a card never made.
func (b *tokenBucket) wait(ctx context.Context) error {
	for {
		b.mu.Lock()
		now := b.now()
		if now.Before(b.until) {
			left := b.until.Sub(now)
			b.mu.Unlock()
			return &core.RetryAfter{After: left, Err: errHeld}
		}
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
		b.last = now
		if b.tokens >= 1 {
			b.tokens--
			b.mu.Unlock()
			return nil
		}
		need := time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
		b.mu.Unlock()
		t := time.NewTimer(need)
		select {
		case <-ctx.Done():
			t.Stop()
			return &core.NotSent{Err: ctx.Err()}
		case <-t.C:
		}
	}
}

// giveBack returns the token of a request that was not sent after all
// (its route had no requests left, takeRoute): kept, it would lower the
// courier's rate for every room, as if the request had gone out.
func (b *tokenBucket) giveBack() {
	b.mu.Lock()
	b.tokens = min(b.burst, b.tokens+1)
	b.mu.Unlock()
}

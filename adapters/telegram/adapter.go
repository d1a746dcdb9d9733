// Package telegram is askbridge's Telegram surface: cards with inline
// keyboards, free-text answers through ForceReply prompts, long polling or
// a webhook for updates, and edits of every card once its question closes.
// It translates and never writes state: every tap and reply goes to core.
package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/core/loops"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/rs/zerolog"
)

// Options configure an Adapter.
type Options struct {
	Token string // the bot token; never logged
	// APIEndpoint is tgbotapi's endpoint format ("…/bot%s/%s"); default
	// tgbotapi.APIEndpoint.
	APIEndpoint string
	// HTTPClient talks to the Bot API; default has timeouts. Its timeout
	// must exceed PollTimeout.
	HTTPClient *http.Client
	// WebhookSecret turns webhook mode on: updates arrive at
	// POST /telegram/webhook carrying it in X-Telegram-Bot-Api-Secret-Token.
	WebhookSecret string
	// WebhookURL is the public URL registered with setWebhook.
	WebhookURL string
	// KV holds the polling offset and lease (polling mode only); the
	// store provides it.
	KV PollState
	// Owner names this replica for the polling lease.
	Owner string
	// PollTimeout is getUpdates' long-poll timeout; default 10s.
	PollTimeout time.Duration
	// LeaseTTL is how long the polling lease lasts unrenewed; default
	// loops.DefaultLeaseTTL. It is renewed beside the long poll, so it may
	// be shorter than PollTimeout.
	LeaseTTL time.Duration
	// Limits are the send rates; zero means Telegram's published limits.
	Limits Limits
	// Budget is the send budget every replica shares (core.Budget, the
	// one the outbox's drain is given). The drain spends one message of
	// a delivery's budgets (Budgets); what the adapter sends beyond that,
	// a clarification's reply prompt after its card and the prompts and
	// notes that answer taps, spends from it here. nil leaves those to
	// the in-process limits alone.
	Budget core.Budget
	Log    zerolog.Logger
}

// Adapter is the Telegram chat surface: a core.Courier plus the inbound
// transports.
type Adapter struct {
	svc  *core.Service
	opts Options
	// bot is a template: each call uses a copy bound to its context. Its
	// Self is filled by getMe in Run, before ready is closed; nothing reads
	// the template before then.
	bot   *tgbotapi.BotAPI
	ready chan struct{}
	http  *http.Client
	log   zerolog.Logger
	lim   *limiter
	// prompts are the reply prompts promised to tappers and not yet
	// sent, and the taps whose store work goes on past their budget
	// (promptQueue.spawn); Run returns once each is sent, given up or
	// done.
	prompts *promptQueue
	sleep   func(ctx context.Context, d time.Duration) bool
	// tapBudget starts a tap's answerBudget: the channel delivers once
	// it is spent (a test's hook, as sleep is).
	tapBudget func() <-chan time.Time
	// renewTick starts the wait for a tap's next renewal (keep): the
	// channel delivers when it is due (a test's hook, as tapBudget is).
	renewTick func() <-chan time.Time
}

var _ core.ChatAdapter = (*Adapter)(nil)

// WebhookPath is where Telegram POSTs updates in webhook mode.
const WebhookPath = "/telegram/webhook"

// SecretHeader carries the webhook's secret token.
const SecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// New checks opts and returns the adapter. It makes no call to Telegram:
// Run asks who the bot is, so a Telegram that cannot be reached at start
// does not keep the rest of the bridge down. Errors never contain the
// token.
func New(svc *core.Service, opts Options) (*Adapter, error) {
	if opts.Token == "" {
		return nil, errors.New("telegram: a bot token is required")
	}
	if opts.APIEndpoint == "" {
		opts.APIEndpoint = tgbotapi.APIEndpoint
	}
	if strings.Count(opts.APIEndpoint, "%s") != 2 {
		return nil, fmt.Errorf("telegram: API endpoint %q must hold two %%s (token, method)", opts.APIEndpoint)
	}
	if opts.PollTimeout <= 0 {
		opts.PollTimeout = 10 * time.Second
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = loops.DefaultLeaseTTL
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: opts.PollTimeout + 20*time.Second}
	}
	if opts.WebhookSecret != "" {
		if err := checkSecret(opts.WebhookSecret); err != nil {
			return nil, err
		}
		if u, err := url.Parse(opts.WebhookURL); err != nil || u.Scheme == "" || u.Host == "" {
			return nil, errors.New("telegram: webhook mode needs the public webhook URL")
		}
	} else if opts.KV == nil {
		return nil, errors.New("telegram: polling mode needs the store's values for the offset and the lease")
	}
	if opts.Owner == "" {
		opts.Owner = "askbridge"
	}
	bot := &tgbotapi.BotAPI{Token: opts.Token, Buffer: 100}
	bot.SetAPIEndpoint(opts.APIEndpoint)
	return &Adapter{svc: svc, opts: opts, bot: bot, ready: make(chan struct{}), http: opts.HTTPClient, log: opts.Log,
		lim: newLimiter(opts.Limits), prompts: newPromptQueue(), sleep: loops.Sleep,
		tapBudget: func() <-chan time.Time { return time.After(answerBudget) },
		renewTick: func() <-chan time.Time { return time.After(tapRenew) }}, nil
}

// errRefused is Run's error for a token Telegram does not accept:
// retrying cannot help, and the bridge should not run half-configured.
var errRefused = errors.New("telegram: getMe: Telegram refused the bot token")

// hello asks Telegram who the bot is, retrying with a growing pause while
// it cannot be reached, and then marks the adapter ready. It returns nil
// if ctx ends first.
func (a *Adapter) hello(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		self, err := a.api(cctx).GetMe()
		cancel()
		if err == nil {
			a.bot.Self = self
			close(a.ready)
			return nil
		}
		var te *tgbotapi.Error
		if errors.As(err, &te) && (te.Code == http.StatusUnauthorized || te.Code == http.StatusNotFound) {
			return fmt.Errorf("%w: %s", errRefused, te.Message)
		}
		if ctx.Err() != nil {
			return nil
		}
		pause := backoff(attempt, err)
		a.log.Warn().Err(err).Dur("retry_in", pause).Msg("telegram: not reachable; deliveries wait until getMe answers")
		if !a.sleep(ctx, pause) {
			return nil
		}
	}
}

// readyWait bounds how long a delivery or a webhook update waits for
// getMe: well under the outbox's idle limit, so no other replica takes a
// delivery over meanwhile, and under Telegram's wait for a webhook answer.
const readyWait = 20 * time.Second

var errNotYet = errors.New("telegram: getMe has not answered since askbridge started")

// awaitReady waits, at most readyWait, until Run's getMe has answered, and
// reports whether it has. While Telegram answers, that is a moment at
// start; while it cannot be reached, the caller gives up and is retried.
func (a *Adapter) awaitReady(ctx context.Context) bool {
	select {
	case <-a.ready:
		return true
	default:
	}
	t := time.NewTimer(readyWait)
	defer t.Stop()
	select {
	case <-a.ready:
		return true
	case <-ctx.Done():
		return false
	case <-t.C:
		return false
	}
}

// started is awaitReady for deliveries, so one goes out as soon as
// Telegram answers rather than at its next retry. Until getMe has
// answered, a delivery is not ready (core.NotReady): it uses up no
// attempt, so cards wait out a Telegram unreachable at start, and it is
// no rate limit, for Telegram named no wait.
func (a *Adapter) started(ctx context.Context) error {
	if a.awaitReady(ctx) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return &core.NotReady{After: time.Second, Err: errNotYet}
}

// checkSecret applies Telegram's rule for secret_token: 1-256 characters
// of A-Z, a-z, 0-9, _ and -.
func checkSecret(s string) error {
	if len(s) > 256 {
		return errors.New("telegram: the webhook secret is longer than 256 characters")
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return errors.New("telegram: the webhook secret may hold only A-Z, a-z, 0-9, _ and -")
		}
	}
	return nil
}

// Bot is the bot's own user, as getMe reported it once Run has started.
func (a *Adapter) Bot() tgbotapi.User { return a.bot.Self }

// Surface implements core.Courier.
func (a *Adapter) Surface() core.Surface { return core.SurfaceTelegram }

// ctxClient binds tgbotapi's context-free requests to a context, and keeps
// the token out of transport errors (tgbotapi puts it in the URL).
type ctxClient struct {
	ctx   context.Context
	c     *http.Client
	token string
}

func (c ctxClient) Do(r *http.Request) (*http.Response, error) {
	resp, err := c.c.Do(r.WithContext(c.ctx))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			red := *ue
			red.URL = strings.ReplaceAll(ue.URL, c.token, "REDACTED")
			return nil, &red
		}
		return nil, errors.New(strings.ReplaceAll(err.Error(), c.token, "REDACTED"))
	}
	return resp, nil
}

func (a *Adapter) client(ctx context.Context) ctxClient {
	return ctxClient{ctx: ctx, c: a.http, token: a.opts.Token}
}

// api is the bot bound to ctx.
func (a *Adapter) api(ctx context.Context) *tgbotapi.BotAPI {
	b := *a.bot
	b.Client = a.client(ctx)
	return &b
}

// send sends m to `to` within the rate limits (its chat's: a topic's
// messages are its chat's), once the adapter has started.
func (a *Adapter) send(ctx context.Context, to place, m tgbotapi.MessageConfig) (tgbotapi.Message, error) {
	if err := a.started(ctx); err != nil {
		return tgbotapi.Message{}, err
	}
	if err := a.lim.wait(ctx, to.chat); err != nil {
		return tgbotapi.Message{}, err
	}
	return a.post(ctx, to, m)
}

// classify maps Telegram's errors to what the outbox understands: slow
// down, or give up on this delivery.
func classify(err error) error {
	var te *tgbotapi.Error
	if err == nil || !errors.As(err, &te) {
		return err
	}
	switch {
	case te.Code == http.StatusTooManyRequests || te.RetryAfter > 0:
		after := time.Duration(te.RetryAfter) * time.Second
		if after < time.Second {
			after = time.Second
		}
		return &core.RetryAfter{After: after, Err: err}
	case te.MigrateToChatID != 0:
		// The group is a supergroup now, with a new id that the route's
		// room must name: said in the error, which the log shows, as
		// Telegram's description does not.
		return &core.Permanent{Err: fmt.Errorf("telegram: the group was upgraded to a supergroup, whose chat id is %d: set the room to it: %w", te.MigrateToChatID, err)}
	case te.Code == http.StatusBadRequest && strings.Contains(te.Message, "TOPIC_CLOSED"):
		// A forum's closed topic takes no messages, General included:
		// a plain chat id of a forum posts into General.
		return &core.Permanent{Err: fmt.Errorf("telegram: the forum topic is closed (a chat id alone posts into the General topic): "+
			"reopen it, or set the room to an open topic, <chat id>:<topic id>: %w", err)}
	case te.Code == http.StatusBadRequest && strings.Contains(te.Message, "message thread not found"):
		return &core.Permanent{Err: fmt.Errorf("telegram: the room's topic id names no topic of the chat, or the chat has no topics "+
			"(a forum supergroup has them, and a private chat once the bot's topics mode is on in @BotFather): %w", err)}
	case te.Code == http.StatusForbidden, te.Code == http.StatusBadRequest:
		// Blocked or kicked (403), chat not found, message gone, can't
		// parse: sending the same again cannot work.
		return &core.Permanent{Err: err}
	case te.Code >= http.StatusInternalServerError:
		// {"ok":false,"error_code":502,"description":"Bad Gateway"}:
		// something behind the Bot API failed, maybe after the message
		// went out. The outcome is unknown (law 4): the post's retry is
		// flagged as a possible repeat.
		return err
	}
	// The Bot API refused the request: nothing was sent.
	return &core.NotSent{Err: err}
}

func notModified(err error) bool {
	var te *tgbotapi.Error
	return errors.As(err, &te) && strings.Contains(te.Message, "message is not modified")
}

// Post implements core.Courier: the card, and for a clarification a
// ForceReply prompt right after it.
func (a *Adapter) Post(ctx context.Context, q *core.Question, msgRef core.MessageRef) (core.MessageRef, error) {
	to, err := parseRoom(msgRef.Room)
	if err != nil {
		return core.MessageRef{}, err
	}
	c := card.New(q, msgRef)
	msg, err := RenderCard(c, to.chat)
	if err != nil {
		return core.MessageRef{}, &core.Permanent{Err: err}
	}
	sent, err := a.send(ctx, to, msg)
	if err != nil {
		return core.MessageRef{}, err
	}
	msgRef.Surface, msgRef.ID = core.SurfaceTelegram, strconv.Itoa(sent.MessageID)
	ref := msgRef
	if q.Kind == core.KindClarification && q.Open() {
		// Best effort: the card takes replies too, so a lost prompt must
		// not make the outbox post the card again.
		prompt, err := RenderPrompt(c, core.Ref{QuestionID: q.ID, Item: -1, Action: core.RefText}, to.chat, sent.MessageID, nil)
		switch {
		case err != nil:
		case a.opts.Budget != nil:
			// A message of its own against the shared budgets, which
			// the drain spent for the card alone. The group's next send
			// may be seconds away: the prompt waits for it on the
			// prompts' queue, as a tap's prompt does, rather than hold
			// up the drain.
			if !a.prompts.hold(to.chat) {
				err = errors.New("telegram: no place for the prompt (too many waiting for their budget, or stopping)")
				break
			}
			go a.sendHeld(to, prompt, func(err error) {
				a.log.Warn().Err(err).Str("question", string(q.ID)).Msg("telegram: reply prompt not sent")
			})
		default:
			_, err = a.send(ctx, to, prompt)
		}
		if err != nil {
			a.log.Warn().Err(err).Str("question", string(q.ID)).Msg("telegram: reply prompt not sent")
		}
	}
	return ref, nil
}

// Update implements core.Courier: the card shows q as it stands. An edit
// to the same content counts as done.
func (a *Adapter) Update(ctx context.Context, q *core.Question, ref core.MessageRef) error {
	to, err := parseRoom(ref.Room)
	if err != nil {
		return err
	}
	chat := to.chat // an edit names its message by chat and id alone, topic or not
	id, err := strconv.Atoi(ref.ID)
	if err != nil || id <= 0 {
		return &core.Permanent{Err: fmt.Errorf("telegram: message id %q is not a number", ref.ID)}
	}
	e, err := RenderEdit(card.New(q, ref), chat, id)
	if err != nil {
		return &core.Permanent{Err: err}
	}
	if err := a.started(ctx); err != nil {
		return err
	}
	if err := a.lim.waitEdit(ctx, chat); err != nil {
		return err
	}
	_, err = a.api(ctx).Send(e)
	if notModified(err) {
		return nil
	}
	return classify(err)
}

// Remind implements core.Courier, replying to the card in room.
func (a *Adapter) Remind(ctx context.Context, q *core.Question, room string) error {
	to, err := parseRoom(room)
	if err != nil {
		return err
	}
	_, err = a.send(ctx, to, RenderReminder(card.Reminder(a.svc, q, core.SurfaceTelegram, room), to.chat))
	return err
}

// Digest implements core.Courier.
func (a *Adapter) Digest(ctx context.Context, d core.Digest, room string) error {
	to, err := parseRoom(room)
	if err != nil {
		return err
	}
	_, err = a.send(ctx, to, RenderDigest(d, to.chat))
	return err
}

// Run asks Telegram who the bot is (retrying until it answers; a refused
// token is an error), then receives updates until ctx ends: in webhook
// mode it registers the webhook (retrying until Telegram takes it) and
// waits; otherwise it long polls while it holds the polling lease. Before
// it returns, reply prompts still waiting for their send budget are given
// up, and it waits for those being sent (promptQueue).
func (a *Adapter) Run(ctx context.Context) error {
	defer a.prompts.close()
	if err := a.hello(ctx); err != nil || ctx.Err() != nil {
		return err
	}
	a.log.Info().Str("bot", a.bot.Self.UserName).Msg("telegram: getMe answered")
	if a.opts.WebhookSecret == "" {
		return a.poll(ctx)
	}
	for attempt := 0; ctx.Err() == nil; attempt++ {
		err := a.registerWebhook(ctx)
		if err == nil {
			a.log.Info().Msg("telegram: webhook registered")
			break
		}
		if ctx.Err() != nil {
			break
		}
		a.log.Warn().Err(err).Msg("telegram: setWebhook failed; retrying")
		if !a.sleep(ctx, backoff(attempt, err)) {
			break
		}
	}
	<-ctx.Done()
	return nil
}

// registerWebhook calls setWebhook with secret_token, which tgbotapi
// v5.5.1's WebhookConfig lacks, through MakeRequest.
func (a *Adapter) registerWebhook(ctx context.Context) error {
	allowed, err := json.Marshal(allowedUpdates)
	if err != nil {
		return err
	}
	_, err = a.api(ctx).MakeRequest("setWebhook", tgbotapi.Params{
		"url":             a.opts.WebhookURL,
		"secret_token":    a.opts.WebhookSecret,
		"allowed_updates": string(allowed),
	})
	return err
}

// backoff is how long to wait before attempt+1 after err: Telegram's
// retry_after if it gave one, else doubling from 1s to 1 minute.
func backoff(attempt int, err error) time.Duration {
	var te *tgbotapi.Error
	if errors.As(err, &te) && te.RetryAfter > 0 {
		return time.Duration(te.RetryAfter) * time.Second
	}
	d := time.Second << min(attempt, 6)
	return min(d, time.Minute)
}

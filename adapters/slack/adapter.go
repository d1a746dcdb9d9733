// Package slack is askbridge's Slack adapter: it posts each question as a
// Block Kit card whose buttons carry only an opaque core.Ref, takes clicks
// and thread replies over Socket Mode or HTTP (Events API and
// Interactivity), hands every one of them to core, and edits every card
// once its question closes.
//
// The adapter writes no state of its own: a thread reply finds its question
// by reading the thread's root message (the card carries its question's
// id), so clicks and replies work after a restart and on any replica.
package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/slack-go/slack"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/loops"
)

// DefaultAPIURL is Slack's Web API. The SDK appends method names to it, so
// it ends with a slash.
const DefaultAPIURL = "https://slack.com/api/"

// DefaultHTTPTimeout bounds each Web API call when Options.HTTPClient is
// nil. The SDK's own default client has none, and a call a peer or proxy
// never answers would hold its delivery batch, and with it every later
// Slack send of this replica, until a restart.
const DefaultHTTPTimeout = 30 * time.Second

// retryPauseMin and retryPauseMax bound the pause before something
// Slack refused is tried again (Socket Mode, auth.test): doubling from
// the one, at most the other.
const (
	retryPauseMin = time.Second
	retryPauseMax = 5 * time.Minute
)

// Options configure the adapter. BotToken is required, and at least one of
// AppToken (Socket Mode) and SigningSecret (HTTP endpoints).
type Options struct {
	BotToken      string       // xoxb-…: every Web API call
	AppToken      string       // xapp-…: Socket Mode; empty leaves it off
	SigningSecret string       // verifies HTTP requests; empty mounts no endpoints
	APIURL        string       // default DefaultAPIURL
	HTTPClient    *http.Client // default: DefaultHTTPTimeout per call
	Log           zerolog.Logger
	// PingInterval is how long Socket Mode waits for Slack's ping before
	// it takes the connection for dead; 0 is the SDK's default (30s).
	PingInterval time.Duration
	// CacheTTL bounds how long user-group members and people's profiles
	// (display name, organisation) are reused; 0 is one minute.
	CacheTTL time.Duration
	// AckBudget bounds the work done before answering an HTTP request,
	// and how long a Socket Mode click or event waits for its handling
	// before it is acknowledged all the same (Slack waits 3 s); 0 is
	// 2.5 s.
	AckBudget time.Duration
}

// Adapter is the Slack surface. It implements core.Courier and is run by
// the program as a chat adapter (Run and Mount).
type Adapter struct {
	svc  *core.Service
	api  *slack.Client
	opts Options
	log  zerolog.Logger

	botUser atomic.Pointer[string]    // our user id, from auth.test
	botID   atomic.Pointer[string]    // our bot id, from auth.test
	team    atomic.Pointer[workspace] // our workspace, from auth.test

	notes    []*noteQueue     // one per sender; a user's notes share one, in order
	cards    *cache[cardInfo] // "channel ts" → the card's question
	members  *cache[[]string] // user-group id → member user ids
	profiles *cache[profile]  // user id → display name and organisation

	work    sync.WaitGroup // inbound handlers started by Socket Mode
	sema    chan struct{}  // bounds those running (maxHandlers)
	pending chan struct{}  // bounds those running or waiting (maxPending)

	// now and sleep are the clock of the pauses before trying again
	// (Socket Mode's reconnects, auth.test), a test's to replace so that
	// it waits none out.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) bool
}

var _ core.ChatAdapter = (*Adapter)(nil)

// New checks o and returns the adapter. It makes no network call: Run
// learns the bot's own user id.
func New(svc *core.Service, o Options) (*Adapter, error) {
	if svc == nil {
		return nil, errors.New("slack: a core service is required")
	}
	if strings.TrimSpace(o.BotToken) == "" {
		return nil, errors.New("slack: a bot token is required")
	}
	if o.AppToken == "" && o.SigningSecret == "" {
		return nil, errors.New("slack: an app-level token (Socket Mode) or a signing secret (HTTP) is required")
	}
	if o.APIURL == "" {
		o.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(o.APIURL, "/") {
		o.APIURL += "/" // the SDK concatenates method names
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = time.Minute
	}
	if o.AckBudget <= 0 {
		o.AckBudget = 2500 * time.Millisecond
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	opts := []slack.Option{slack.OptionAPIURL(o.APIURL), slack.OptionHTTPClient(o.HTTPClient)}
	if o.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(o.AppToken))
	}
	a := &Adapter{
		svc:      svc,
		api:      slack.New(o.BotToken, opts...),
		opts:     o,
		log:      o.Log.With().Str("surface", "slack").Logger(),
		notes:    newNoteQueues(),
		cards:    newCache[cardInfo](4096, time.Hour),
		members:  newCache[[]string](256, o.CacheTTL),
		profiles: newCache[profile](4096, 10*o.CacheTTL),
		sema:     make(chan struct{}, maxHandlers),
		pending:  make(chan struct{}, maxPending),
		now:      time.Now,
		sleep:    loops.Sleep,
	}
	return a, nil
}

// Surface is Slack.
func (a *Adapter) Surface() core.Surface { return core.SurfaceSlack }

// Run learns the bot's user id, sends private notes, and receives Socket
// Mode events when an app token is set, until ctx ends.
func (a *Adapter) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	if !a.whoAmI(ctx) {
		wg.Go(func() { a.askWhoAmI(ctx) })
	}
	for _, q := range a.notes {
		wg.Go(func() { a.sendNotes(ctx, q) })
	}
	if a.opts.AppToken != "" {
		wg.Go(func() { a.runSocket(ctx) })
	}
	wg.Wait()
	a.work.Wait()
	return nil
}

// whoAmI asks auth.test for our user id, so our own thread posts are
// never read as answers (they also carry a bot_id, which is checked too),
// for our bot id, which tells our reminders from look-alikes
// (cardQuestion), and for our workspace, whose members "*" lets in
// (ourTeam). It reports whether auth.test answered.
func (a *Adapter) whoAmI(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := a.api.AuthTestContext(ctx)
	if err != nil {
		a.log.Warn().Err(err).Msg("auth.test failed; our own messages are recognised by their bot id only")
		return false
	}
	a.botUser.Store(&res.UserID)
	a.botID.Store(&res.BotID)
	a.team.Store(&workspace{team: res.TeamID, enterprise: res.EnterpriseID})
	return true
}

// askWhoAmI asks auth.test again, after pauses doubling from
// retryPauseMin to retryPauseMax, until it answers or ctx ends. Asked
// once only, a Slack (or a network) not answering at start left the
// adapter unsure for the life of the process which posts were its own:
// replies to its reminders went unrecorded, and every reply in a thread
// under a person's message cost a read of the thread's root.
func (a *Adapter) askWhoAmI(ctx context.Context) {
	for pause := retryPauseMin; a.botID.Load() == nil; pause = min(2*pause, retryPauseMax) {
		if !a.sleep(ctx, pause) || a.whoAmI(ctx) {
			return
		}
	}
}

func (a *Adapter) isMe(user string) bool {
	me := a.botUser.Load()
	return me != nil && *me != "" && *me == user
}

// isOurBot reports whether a message with this bot_id was posted by us.
func (a *Adapter) isOurBot(botID string) bool {
	me := a.botID.Load()
	return me != nil && *me != "" && *me == botID
}

// cardInfo is what is known of a thread's root message: the question it
// is the card of ("" for none) and whether we know we posted it.
type cardInfo struct {
	id   core.QuestionID
	ours bool
}

// cache is a small map with a lifetime per entry and a bound on its size
// (when full it starts over: it only saves API calls).
type cache[V any] struct {
	mu  sync.Mutex
	ttl time.Duration
	max int
	m   map[string]cacheEntry[V]
}

type cacheEntry[V any] struct {
	v  V
	at time.Time
}

func newCache[V any](max int, ttl time.Duration) *cache[V] {
	return &cache[V]{ttl: ttl, max: max, m: map[string]cacheEntry[V]{}}
}

func (c *cache[V]) get(k string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || time.Since(e.at) > c.ttl {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *cache[V]) put(k string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = cacheEntry[V]{v: v, at: time.Now()}
}

func cardKey(channel, ts string) string { return channel + " " + ts }

// permanentErrors names the Slack error codes after which retrying a
// delivery cannot help: the channel or message is gone, or we are not in
// it; the token is refused for good (revoked, expired, of the wrong type,
// or its user or workspace deleted) or lacks what the call needs (a
// scope, a permission, an administrator's leave), which only a person
// changing the app's installation can fix, so every retry would be
// refused the same; or the message is one Slack will never take. These
// are the errors Slack lists for every Web API method.
var permanentErrors = map[string]bool{
	"not_authed":                true,
	"token_expired":             true,
	"not_allowed_token_type":    true,
	"missing_scope":             true,
	"no_permission":             true,
	"access_denied":             true,
	"ekm_access_denied":         true,
	"team_access_not_granted":   true,
	"two_factor_setup_required": true,
	"org_login_required":        true,
	"enterprise_is_restricted":  true,
	"method_deprecated":         true,
	"deprecated_endpoint":       true,
	"channel_not_found":         true,
	"not_in_channel":            true,
	"is_archived":               true,
	"message_not_found":         true,
	"cant_update_message":       true,
	"edit_window_closed":        true,
	"invalid_blocks":            true,
	"msg_blocks_too_long":       true,
	"msg_too_long":              true,
	"restricted_action":         true,
	"invalid_auth":              true,
	"account_inactive":          true,
	"token_revoked":             true,
}

// mayHaveActed names the Slack error codes that Slack documents as "it's
// possible some aspect of the operation succeeded before the error was
// raised": a post that got one may be in the channel.
var mayHaveActed = map[string]bool{
	"internal_error": true,
	"fatal_error":    true,
}

// rateLimitCodes name the Slack error codes that refuse a call for the
// app's pace, not for the call: rate_limited ("Application has posted
// too many messages"), which comes as "ok": false with no Retry-After,
// and ratelimited, a 429's own code.
var rateLimitCodes = map[string]bool{
	"rate_limited": true,
	"ratelimited":  true,
}

// rateLimitedWait is how long a delivery waits after a rate limit that
// names no wait of its own: Slack counts its limits per minute.
const rateLimitedWait = time.Minute

// deliveryErr maps a Web API error to what core.Deliver understands.
// Every rate limit is a core.RetryAfter, with or without Slack's own
// Retry-After: counted as a failed attempt instead, a burst long enough
// to refuse a card eight times would drop it as undelivered, and an
// unknown outcome would mark its next post a possible repeat.
func deliveryErr(op string, err error) error {
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return &core.RetryAfter{After: rl.RetryAfter, Err: fmt.Errorf("slack %s: %w", op, err)}
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) && sc.Code == http.StatusTooManyRequests {
		// A 429 that names no wait (one that names a wait is the
		// SDK's RateLimitedError).
		return &core.RetryAfter{After: rateLimitedWait, Err: fmt.Errorf("slack %s: %w", op, err)}
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && rateLimitCodes[se.Err] {
		return &core.RetryAfter{After: rateLimitedWait, Err: fmt.Errorf("slack %s: %w", op, err)}
	}
	if errors.As(err, &se) && permanentErrors[se.Err] {
		return &core.Permanent{Err: fmt.Errorf("slack %s: %w", op, err)}
	}
	if errors.As(err, &se) && !mayHaveActed[se.Err] {
		// Slack answered "ok": false: nothing was posted.
		return &core.NotSent{Err: fmt.Errorf("slack %s: %w", op, err)}
	}
	// Slack may have acted (internal_error, fatal_error), or the call
	// failed on the way: the outcome is unknown, and a post's retry is
	// flagged as a possible repeat.
	return fmt.Errorf("slack %s: %w", op, err)
}

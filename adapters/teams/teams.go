// Package teams is askbridge's Microsoft Teams surface: a Bot Framework
// bot that posts each question as an Adaptive Card (a new thread per
// question in a channel, or into a personal or group chat), takes card
// actions (Action.Execute, with Action.Submit for clients without
// universal actions) and thread replies, and updates every card in place
// once its question closes. It translates and never writes state: every
// click and reply goes to core.
//
// The Bot Connector is plain REST: outbound calls carry the bot's app
// token (OAuth client credentials), and inbound activities carry a JWT
// the adapter checks against the Bot Framework's OpenID metadata and
// signing keys before it reads them.
package teams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/core/loops"
	"github.com/rs/zerolog"
	"golang.org/x/oauth2/clientcredentials"
)

// Defaults from Microsoft's documentation: the global service URL for
// proactive messages, and the token endpoint and scope of a multi-tenant
// bot's app registration.
const (
	DefaultServiceURL = "https://smba.trafficmanager.net/teams/"
	DefaultTokenURL   = "https://login.microsoftonline.com/botframework.com/oauth2/v2.0/token"
	Scope             = "https://api.botframework.com/.default"
)

// MessagesPath is the bot's messaging endpoint, where the Bot Connector
// POSTs activities.
const MessagesPath = "/teams/messages"

// Options configure an Adapter.
type Options struct {
	AppID       string // the app registration's (client) id: the token's audience
	AppPassword string // its client secret; never logged
	// TenantID is the Microsoft Entra tenant the bot posts in (new
	// threads and personal chats are created in it).
	TenantID string
	// TokenURL is the app token endpoint; default DefaultTokenURL (a
	// single-tenant app uses its own tenant's).
	TokenURL string
	// ServiceURL is the Bot Connector base for proactive posts; default
	// DefaultServiceURL.
	ServiceURL string
	// OpenIDURL is the Bot Framework's OpenID metadata; default
	// DefaultOpenIDURL.
	OpenIDURL string
	// KV ties a channel thread's root to its question, so that a reply
	// in the thread answers it.
	KV core.Values
	// HTTPClient makes every call; default has a 30 s timeout.
	HTTPClient *http.Client
	// Now is the clock tokens are checked against, refusals' logging is
	// paced by, and a Retry-After date is read against; default time.Now.
	Now func() time.Time
	Log zerolog.Logger
}

// Adapter is the Teams chat surface.
type Adapter struct {
	svc  *core.Service
	opts Options
	conn *connector
	auth *verifier
	log  zerolog.Logger
	// refusals logs refused requests at a bounded rate.
	refusals *refusalLog
	// sleep waits out a throttled private note's pause (unthrottled), a
	// test's to replace so that it waits none out.
	sleep func(ctx context.Context, d time.Duration) bool
}

var _ core.ChatAdapter = (*Adapter)(nil)

// New checks opts and returns the adapter. It makes no call to
// Microsoft: Run fetches the signing keys, and the app token is fetched
// by the first send.
func New(svc *core.Service, opts Options) (*Adapter, error) {
	switch {
	case opts.AppID == "":
		return nil, errors.New("teams: the bot's app id is required")
	case opts.AppPassword == "":
		return nil, errors.New("teams: the bot's app password (client secret) is required")
	case opts.TenantID == "":
		return nil, errors.New("teams: the tenant id is required")
	case opts.KV == nil:
		return nil, errors.New("teams: the store's values are required")
	}
	for _, u := range []*string{&opts.TokenURL, &opts.ServiceURL, &opts.OpenIDURL} {
		if *u == "" {
			continue
		}
		if p, err := url.Parse(*u); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return nil, fmt.Errorf("teams: %q is not an http(s) URL", *u)
		}
	}
	if opts.TokenURL == "" {
		opts.TokenURL = DefaultTokenURL
	}
	if opts.ServiceURL == "" {
		opts.ServiceURL = DefaultServiceURL
	}
	if opts.OpenIDURL == "" {
		opts.OpenIDURL = DefaultOpenIDURL
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	cc := clientcredentials.Config{ClientID: opts.AppID, ClientSecret: opts.AppPassword, TokenURL: opts.TokenURL, Scopes: []string{Scope}}
	conn := newConnector(opts.ServiceURL, cc, opts.HTTPClient)
	conn.now = opts.Now
	return &Adapter{
		svc: svc, opts: opts, log: opts.Log,
		conn:     conn,
		auth:     newVerifier(opts.OpenIDURL, opts.AppID, opts.HTTPClient, opts.Now, opts.Log),
		refusals: newRefusalLog(opts.Log, opts.Now),
		sleep:    loops.Sleep,
	}, nil
}

// Surface implements core.Courier.
func (a *Adapter) Surface() core.Surface { return core.SurfaceTeams }

// Run fetches the Bot Framework's signing keys (retrying while they
// cannot be reached; activities wait or are refused until then) and
// keeps them fresh until ctx ends.
func (a *Adapter) Run(ctx context.Context) error {
	err := a.auth.start(ctx, func(attempt int, err error) bool {
		pause := min(time.Second<<min(attempt, 6), time.Minute)
		a.log.Warn().Err(err).Dur("retry_in", pause).Msg("teams: the signing keys cannot be fetched yet; activities are refused until they are")
		return loops.Sleep(ctx, pause)
	})
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return err
	}
	a.log.Info().Msg("teams: signing keys fetched")
	<-ctx.Done()
	return nil
}

// isChannel reports whether room is a team channel's id, where each
// question starts a thread of its own. Group chats (…@thread.v2) and
// personal chats (a:…) take posts directly.
func isChannel(room string) bool {
	return strings.HasPrefix(room, "19:") && (strings.HasSuffix(room, "@thread.tacv2") || strings.HasSuffix(room, "@thread.skype"))
}

// threadOf is the conversation id of the thread whose root is activity
// root in channel.
func threadOf(channel, root string) string { return channel + ";messageid=" + root }

// conversation is the conversation a card in room lives in: a channel
// thread rooted at the card, a person's personal chat (created, or found
// again, by the connector), or the room itself.
func (a *Adapter) conversation(ctx context.Context, room, id string) (string, error) {
	if user, ok := core.DMUser(room); ok {
		return a.personal(ctx, user)
	}
	if isChannel(room) && id != "" {
		return threadOf(room, id), nil
	}
	return room, nil
}

// personal is the bot's personal chat with the person whose AAD object
// id is user. Creating a one-to-one conversation that exists returns it.
func (a *Adapter) personal(ctx context.Context, user string) (string, error) {
	res, err := a.conn.createConversation(ctx, ConversationParameters{
		Bot: &Account{ID: "28:" + a.opts.AppID}, Members: []Account{{ID: user}}, TenantID: a.opts.TenantID,
	})
	if err != nil {
		return "", err
	}
	return res.ID, nil
}

func cardActivity(card AdaptiveCard, summary string) *Activity {
	return &Activity{Type: "message", Summary: summary, Attachments: []Attachment{{ContentType: ContentTypeCard, Content: card}}}
}

// threadTTL is how long a thread's root, and a card, is tied to its
// question past the last deadline the question can reach.
const threadTTL = 24 * time.Hour

// Post implements core.Courier.
func (a *Adapter) Post(ctx context.Context, q *core.Question, ref core.MessageRef) (core.MessageRef, error) {
	c := card.New(q, ref)
	act := cardActivity(Card(c, isChannel(ref.Room)), Summary(c))
	var conv, id string
	var err error
	if isChannel(ref.Room) {
		if id, err = a.startThread(ctx, ref.Room, act); err != nil {
			return core.MessageRef{}, err
		}
		conv = threadOf(ref.Room, id)
		a.tieThread(ctx, q, conv)
	} else {
		if conv, err = a.conversation(ctx, ref.Room, ""); err != nil {
			// Finding or opening the personal chat failed: whatever
			// Teams did with that, the card was never sent.
			return core.MessageRef{}, &core.NotSent{Err: err}
		}
		if id, err = a.conn.send(ctx, conv, act); err != nil {
			return core.MessageRef{}, err
		}
	}
	if id == "" {
		return core.MessageRef{}, errors.New("teams: the bot connector returned no activity id")
	}
	a.tie(ctx, q, cardKey(conv, id), "teams: the card is not tied to its question; its actions count once it is recorded")
	ref.Surface, ref.ID = core.SurfaceTeams, id
	return ref, nil
}

// startThread posts act as a new thread in channel, and returns its
// root's activity id.
func (a *Adapter) startThread(ctx context.Context, channel string, act *Activity) (string, error) {
	data, _ := json.Marshal(map[string]any{"channel": map[string]string{"id": channel}})
	res, err := a.conn.createConversation(ctx, ConversationParameters{IsGroup: true, TenantID: a.opts.TenantID, Activity: act, ChannelData: data})
	if err != nil {
		return "", err
	}
	id := res.ActivityID
	if id == "" {
		// Teams names the thread "<channel>;messageid=<root>".
		_, id, _ = strings.Cut(res.ID, ";messageid=")
	}
	return id, nil
}

// tieThread ties the thread conv (a channel's id and its root's, as
// threadOf makes it) to q, so that a reply in it answers q; a thread
// left untied only takes no replies.
func (a *Adapter) tieThread(ctx context.Context, q *core.Question, conv string) {
	if _, root, ok := strings.Cut(conv, ";messageid="); ok && root != "" {
		a.tie(ctx, q, threadKey(conv), "teams: the thread is not tied to its question; replies in it will not count")
	}
}

// tie keeps q's id under key as long as tieFor says; failed is the
// warning logged if it cannot.
func (a *Adapter) tie(ctx context.Context, q *core.Question, key, failed string) {
	if err := a.opts.KV.SetValueFor(ctx, key, string(q.ID), a.tieFor(q)); err != nil {
		a.log.Warn().Err(err).Str("question", string(q.ID)).Msg(failed)
	}
}

// tieFor is how long a tie of q lasts: past the last deadline q can
// reach (each reask it has left, and an escalation not yet made, moves
// the deadline on by q's timeout), and a day more, so that a reply
// after a reask or an escalation still finds its question, and one
// after it closed is told how it ended. A ticker running late moves the
// deadline later still; the day covers that, and a reask's reminder in
// the thread ties it again (Remind).
func (a *Adapter) tieFor(q *core.Question) time.Duration {
	more := 0
	switch q.OnTimeout {
	case core.OnTimeoutReask:
		more = max(q.MaxReasks-q.Renotified, 0)
	case core.OnTimeoutEscalate:
		if q.Renotified == 0 {
			more = 1
		}
	}
	left := max(q.Deadline.Sub(a.svc.Now()), 0)
	return left + time.Duration(more)*time.Duration(q.Timeout) + threadTTL
}

// threadKey ties the thread conv ("<channel>;messageid=<root>") to its
// question: the channel and the root together, as Teams' message ids
// are unique only within a channel.
func threadKey(conv string) string { return "teams:thread:" + conv }

// legacyThreadKey is how a thread was tied before: by its root alone.
// Such a tie is still read (threadQuestion), for questions asked before.
func legacyThreadKey(root string) string { return "teams:thread:" + root }

// cardKey ties the card posted as activity id in conversation conv to
// its question (fromCard).
func cardKey(conv, id string) string { return "teams:card:" + conv + "#" + id }

// Update implements core.Courier: the card is replaced in place.
func (a *Adapter) Update(ctx context.Context, q *core.Question, ref core.MessageRef) error {
	if ref.ID == "" {
		return &core.Permanent{Err: errors.New("teams: the card has no activity id")}
	}
	conv, err := a.conversation(ctx, ref.Room, ref.ID)
	if err != nil {
		return err
	}
	c := card.New(q, ref)
	return a.conn.update(ctx, conv, ref.ID, cardActivity(Card(c, isChannel(ref.Room)), Summary(c)))
}

// Remind implements core.Courier: in the card's thread when the room
// holds the card, else as a post of its own. In a channel that is a
// thread of its own, tied to the question as a card's thread is, so a
// reply to the reminder answers as one to the card does rather than
// being dropped without a word.
func (a *Adapter) Remind(ctx context.Context, q *core.Question, room string) error {
	c := card.Reminder(a.svc, q, core.SurfaceTeams, room)
	act := cardActivity(Reminder(c), card.ReminderHeading)
	switch {
	case c.ReplyTo != nil && isChannel(room):
		// The card's thread is tied again, for as long as the question
		// can now stay open: a reask has moved its deadline.
		thread := threadOf(room, c.ReplyTo.ID)
		if _, err := a.conn.send(ctx, thread, act); err != nil {
			return err
		}
		a.tieThread(ctx, q, thread)
		return nil
	case isChannel(room):
		root, err := a.startThread(ctx, room, act)
		if err != nil {
			return err
		}
		a.tieThread(ctx, q, threadOf(room, root))
		return nil
	}
	return a.post(ctx, room, act)
}

// Digest implements core.Courier.
func (a *Adapter) Digest(ctx context.Context, d core.Digest, room string) error {
	return a.post(ctx, room, cardActivity(Digest(d), card.DigestHeading))
}

// post sends act into room: a new thread of its own in a channel.
func (a *Adapter) post(ctx context.Context, room string, act *Activity) error {
	if isChannel(room) {
		_, err := a.startThread(ctx, room, act)
		return err
	}
	conv, err := a.conversation(ctx, room, "")
	if err != nil {
		return err
	}
	_, err = a.conn.send(ctx, conv, act)
	return err
}

// Teams' documented per-bot limits: per conversation, 7 messages a
// second, 60 in 30 seconds; and 50 a second for the bot in all.
var (
	convBudget   = core.Limit{Rate: 60, Per: 30 * time.Second, Burst: 7}
	globalBudget = core.Limit{Rate: 50, Per: time.Second}
)

var _ core.Budgeted = (*Adapter)(nil)

// Budgets names what a delivery spends: its room, and the bot as a
// whole.
func (a *Adapter) Budgets(d core.Delivery) []core.Allowance {
	out := []core.Allowance{{Key: "teams:all", Limit: globalBudget}}
	room := d.Room
	if d.Message != nil && room == "" {
		room = d.Message.Room
	}
	if room != "" {
		out = append(out, core.Allowance{Key: "teams:conv:" + room, Limit: convBudget})
	}
	return out
}

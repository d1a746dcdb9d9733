package teams

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/apierror"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// The Bot Connector sends an activity again, same id and all, when the
// bot was slow to answer it: "If the bot activity takes more than 15
// seconds to process, Teams send a retry request to bot endpoint"
// (Teams' "Bot activity handlers",
// learn.microsoft.com/microsoftteams/platform/bots/bot-basics); and, by
// the word of Teams' own platform team, when the bot answers "certain
// failure HTTP status codes", which no page lists
// (github.com/MicrosoftDocs/msteams-docs/issues/8998). A copy of an
// activity handled already acts on nothing; an invoke's copy is still
// answered, and what it says must be true: the clicker never saw the
// first copy's answer, since Teams gave up waiting for it. A copy of an
// activity whose handling never ended (the replica that took it died
// with it) is handled, as the first copy it stands for: the activity is
// marked seen only once its handling has ended (core.Service.Sight), and
// until then held by a claim short enough to have lapsed when the
// connector sends it again (seenHold).
//
// A copy that comes while another handling has the activity in hand
// (core.OnceHeld: a retry after a connection that broke, on another
// replica) is answered 503 (notYet), as Slack's and Telegram's doors
// answer theirs. Answered 200, it was the copy the connector counted
// delivered: had the handling in hand then died, the click or reply was
// lost with nothing said. Whether the connector retries a 503 is not
// documented, so 503 is the answer that cannot lose one silently: sent
// again, the copy is told the first copy's note or, the claim having
// lapsed, handled; not sent again, nothing is lost that a 200 kept, and
// an invoke's clicker sees Teams' own error, which asks them to try
// again, and core tells that try the truth.

// seenFor is how long an activity's id is remembered: longer than the
// Bot Connector's token that carried it is good for (an hour, and the
// leeway), since the token is not bound to the body it came with.
const seenFor = 2 * time.Hour

// seenHold is how long an activity's claim lasts while it is handled:
// past the handling's own bound (handleBudget), so that no copy acts
// beside it, and under the fifteen seconds after which the connector
// sends again an activity it heard nothing back for, so that the copy of
// one whose replica died with it finds the claim lapsed.
const seenHold = handleBudget + time.Second

// handleBudget bounds the handling of one activity (serveActivity), well
// under the connector's fifteen seconds.
const handleBudget = 12 * time.Second

// seenKey names act for every replica: Teams' ids are unique within a
// conversation, so both key it.
func seenKey(act *Activity) string {
	conv := ""
	if act.Conversation != nil {
		conv = act.Conversation.ID
	}
	return conv + ":" + act.ID
}

// firstSeen reports whether act is new to every replica, and claims it
// for the handling in hand (inHand) when it is: a copy that comes
// meanwhile, or once it is handled, is not. A second copy of a form's
// thread reply would answer the next item too. An activity without an
// id counts as new. Marking one is a store write (a disk sync on the
// embedded store) kept for seenFor, so only an activity that may act is
// marked: with consent to read every message, the bot is sent all the
// talk in its channels and chats.
func (a *Adapter) firstSeen(ctx context.Context, act *Activity) bool {
	if act.ID == "" {
		return true
	}
	return a.claim(ctx, "teams:activity:"+seenKey(act))
}

// claim claims the inbound event key names for the handling in hand,
// and reports whether it is that handling's to act on. One that another
// handling has in hand is recorded as such (inHand.held), so that the
// activity is answered 503 and sent again (notYet).
func (a *Adapter) claim(ctx context.Context, key string) bool {
	g := a.svc.Sight(ctx, key, seenHold, seenFor)
	h, _ := ctx.Value(inHandKey{}).(*inHand)
	switch {
	case g.State == core.OnceHeld && h != nil:
		h.held = true
	case !g.First():
	case h != nil:
		h.g = append(h.g, g)
	default:
		g.Handled(ctx) // no handling to wait for: marked at once
	}
	return g.First()
}

// inHand is the claims an activity's handling took (firstSeen), which
// serveActivity confirms once that handling has ended: the claims are
// taken down the handling's paths (onReply takes one only once it knows
// the reply acts), and it is there that their end is known. held is set
// when a claim found the activity in another handling's hand.
type inHand struct {
	g    []core.Sighting
	held bool
}

type inHandKey struct{}

// handling is ctx carrying a fresh inHand for one activity's handling.
func handling(ctx context.Context) (context.Context, *inHand) {
	h := &inHand{}
	return context.WithValue(ctx, inHandKey{}, h), h
}

// done confirms the claims taken, the handling having ended: answered,
// refused, or told why not. It runs once the handling's note has gone
// out (tell) or, an invoke's, been kept for its copies (keepNote) and
// made the answer, so that a copy sent because that answer never
// reached the connector is told it (repeated). A handling that failed
// on the store (core.HandleAgain) is told so and confirmed too, not
// released for the activity to come again as Slack's is: Teams
// documents no retry of an activity answered with an error, nor names
// the last try (as Slack's X-Slack-Retry-Num does), so, as on
// Telegram's webhook, its writer is told at once to try again, lest it
// be lost with nothing said.
func (h *inHand) done(ctx context.Context) {
	for _, g := range h.g {
		g.Handled(ctx)
	}
}

// answer answers the activity whose handling h was: 503 for one that
// another handling had in hand (notYet), else 200.
func (h *inHand) answer(w http.ResponseWriter) {
	if h.held {
		notYet(w)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// notYet answers a copy of an activity that another handling has in
// hand, changing nothing, so that the connector sends it again (see the
// top of this file).
func notYet(w http.ResponseWriter) {
	apierror.Write(w, http.StatusServiceUnavailable, core.CodeInternal, "the activity is not handled yet; send it again")
}

// noteKey keeps what the first copy of invoke act was told.
func noteKey(act *Activity) string { return "teams:note:" + seenKey(act) }

// keepNote keeps note, what the first copy of invoke act was told, for
// a copy of it that comes later (repeated). One that cannot be kept
// leaves that copy told it may or may not have counted, which is true.
func (a *Adapter) keepNote(ctx context.Context, act *Activity, note string) {
	if act.ID == "" || note == "" {
		return
	}
	if err := a.opts.KV.SetValueFor(ctx, noteKey(act), note, seenFor); err != nil {
		a.log.Warn().Err(err).Msg("teams: a click's note is not kept; a repeat of it is told it may not have counted")
	}
}

// repeated answers a copy of an activity handled already, changing
// nothing. An invoke's copy is told what its first copy was told
// (keepNote); if what it was told cannot be read, that it may or may
// not have counted and how to find out (card.TimedOutNote), never that
// it counted. Only the first copy of a reply or a submit is told
// anything: it is told in a message of its own, which Teams does not
// drop.
func (a *Adapter) repeated(ctx context.Context, w http.ResponseWriter, act *Activity) {
	a.log.Debug().Str("type", act.Type).Msg("teams: activity ignored: already handled")
	if act.Type != "invoke" {
		w.WriteHeader(http.StatusOK)
		return
	}
	note, err := a.opts.KV.Value(ctx, noteKey(act))
	if err != nil || note == "" {
		note = card.TimedOutNote
	}
	invokeNote(w, note)
}

// invokeNote answers an adaptiveCard/action invoke with note, shown to
// the clicker alone.
func invokeNote(w http.ResponseWriter, note string) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(InvokeResponse{StatusCode: http.StatusOK, Type: InvokeMessage, Value: note})
}

// fresh is firstSeen for a message that may act (onReply): a repeat is
// dropped without a word, as its first copy was answered; a copy that
// another handling has in hand is answered 503 (inHand.answer).
func (a *Adapter) fresh(ctx context.Context, act *Activity) bool {
	if a.firstSeen(ctx, act) {
		return true
	}
	a.log.Debug().Str("type", act.Type).Msg("teams: activity not acted on: handled already, or in another handling's hand")
	return false
}

package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/askbridge/askbridge/adapters/internal/apierror"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// InteractionsPath is where Discord posts interactions when the app's
// Interactions Endpoint URL points at askbridge.
const InteractionsPath = "/discord/interactions"

// maxSkew is how far a signed timestamp may be from now. discordgo's
// VerifyInteraction checks the signature only; a replayed request older
// than this is refused too.
const maxSkew = 5 * time.Minute

// maxBody bounds an interaction request.
const maxBody = 1 << 20

// responseWindow is how long Discord waits for an interaction's response,
// counted from when it sent the interaction.
const responseWindow = 3 * time.Second

// answerBudget is the part of responseWindow askbridge spends before it
// responds, counted from when the interaction arrived: the dedupe, the
// answer and their store writes. The rest, responseMargin, is for the
// trip to Discord (and the trip in, spent before our clock starts). An
// HTTP response that goes out later than this does not count as having
// updated the card: it may reach a connection Discord has given up on and
// never be applied, so the card's held update stays due and edits it.
const (
	responseMargin = 500 * time.Millisecond
	answerBudget   = responseWindow - responseMargin
)

// Mount adds the HTTP interactions endpoint, when a public key is set.
func (a *Adapter) Mount(mux *http.ServeMux) {
	if a.opts.PublicKey == nil {
		return
	}
	mux.Handle("POST "+InteractionsPath, http.HandlerFunc(a.serveInteraction))
}

// serveInteraction verifies, decodes and answers one interaction in the
// HTTP response body. Anything unverified gets 401 and reaches nothing.
func (a *Adapter) serveInteraction(w http.ResponseWriter, r *http.Request) {
	arrived := a.now()
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if !discordgo.VerifyInteraction(r, a.opts.PublicKey) || !a.fresh(r.Header.Get("X-Signature-Timestamp")) {
		apierror.Write(w, http.StatusUnauthorized, core.CodeForbidden, "invalid request signature")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		apierror.Write(w, http.StatusBadRequest, core.CodeInvalid, "unreadable body")
		return
	}
	var i discordgo.Interaction
	if err := json.Unmarshal(body, &i); err != nil {
		if !dataUnreadable(&i) {
			a.log.Debug().Err(err).Msg("discord: an interaction did not decode")
			apierror.Write(w, http.StatusBadRequest, core.CodeInvalid, "malformed interaction")
			return
		}
		// Discord's, signed, but with data discordgo cannot read (a
		// component newer than it, such as a Label in a modal): its
		// sender is told so, as over the gateway (errUnreadable),
		// rather than Discord's bare "This interaction failed".
		a.log.Warn().Err(err).Msg("discord: an interaction's data could not be read; its sender is told so")
	}
	var resp *discordgo.InteractionResponse
	var held *core.Pending
	switch {
	case i.Type == discordgo.InteractionPing:
		resp = &discordgo.InteractionResponse{Type: discordgo.InteractionResponsePong}
	case !a.firstSeen(r.Context(), i.ID, arrived):
		// A copy (copyNote): it acts on nothing, and says so.
		resp = RenderNote(copyNote)
	default:
		resp, held = a.respond(r.Context(), &i, arrived)
	}
	out, err := json.Marshal(resp)
	if err != nil {
		a.log.Error().Err(err).Msg("discord: could not encode an interaction response")
		apierror.Write(w, http.StatusInternalServerError, core.CodeInternal, "response not encodable")
		return
	}
	// A requester that has hung up (its context ends then) gets nothing
	// written to it, yet the first write into the closed connection does
	// not fail: a proxy that gave up on this copy (and may send Discord's
	// request again, copyNote) keeps the held update due, below. Asked
	// before the write, as one that hangs up once it has read the
	// response (a proxy keeping no connection to us) ends it too.
	gone := r.Context().Err() != nil
	// With its length announced, the response is whole once its bytes are
	// flushed: Discord has it without waiting for the handler to end, so
	// the click's acknowledgement never waits for the held update's cancel
	// below (a round trip to the store), as a chunked one did.
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	if _, err := w.Write(out); err != nil {
		a.log.Debug().Err(err).Msg("discord: could not write an interaction response")
		return
	}
	// The held card update is cancelled only once the response is on its
	// way to Discord: written and flushed without error, within the
	// budget, to a requester still there (gone). Later, even under three seconds by our clock, Discord may
	// already have given up (its clock started before ours, and the bytes
	// still have to reach it): the update then edits the card once more,
	// rather than leaving it showing the question open.
	if err := http.NewResponseController(w).Flush(); err != nil {
		a.log.Debug().Err(err).Msg("discord: could not flush an interaction response")
		return
	}
	if a.left(arrived) > 0 && !gone {
		a.delivered(r.Context(), held)
	}
}

// copyNote answers an HTTP copy of an interaction taken in hand
// already. Discord documents no retry of an interaction it posts; a
// copy comes from a proxy in front of the endpoint that retried
// Discord's one request, having given up on the first copy's answer, so
// the copy's answer is the only one Discord gets (it takes one response
// per interaction, and the proxy hands it one). A bare acknowledgement
// (a deferred update) left the clicker with nothing, whether the first
// copy counted, is still being handled, or was lost with a replica. The
// copy cannot know which, so it says what is true of them all, as a
// Teams invoke's copy does: it may or may not have counted, and a click
// again is told which. Over the gateway a copy is a resume's replay of
// an event whose first copy makes the one callback, so it is dropped
// without one (onGateway).
var copyNote = card.TimedOutNote

// dataUnreadable reports whether i, which discordgo failed to decode,
// is an interaction whose data alone it could not read: discordgo fills
// in the interaction (id, type, token) before it reads the data, which
// it leaves nil, as it hands such an interaction on over the gateway. A
// body that is not an interaction at all leaves i empty.
func dataUnreadable(i *discordgo.Interaction) bool {
	return i.ID != "" && i.Token != "" && i.Type != 0 && i.Data == nil
}

// fresh reports whether a signed timestamp (Unix seconds) is within
// maxSkew of now, either way.
func (a *Adapter) fresh(ts string) bool {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	d := a.now().Sub(time.Unix(sec, 0))
	return d <= maxSkew && d >= -maxSkew
}

// firstSeen reports whether an interaction is new to every replica: a
// gateway resume replays events, and a retried HTTP call repeats one. An
// interaction token lives 15 minutes, so that is how long an id is kept.
// The store write is bounded by the interaction's budget from arrived:
// it is spent from Discord's three seconds like the answer after it (a
// write that runs out counts the interaction as new, and respond then
// finds no budget left to take it).
func (a *Adapter) firstSeen(ctx context.Context, id string, arrived time.Time) bool {
	ctx, cancel := context.WithTimeout(ctx, a.left(arrived))
	defer cancel()
	return a.svc.FirstSeen(ctx, "discord:interaction:"+id, 15*time.Minute)
}

// left is what remains of answerBudget for an interaction that arrived
// then.
func (a *Adapter) left(arrived time.Time) time.Duration {
	return answerBudget - a.now().Sub(arrived)
}

// callbackRetries is how often an interaction callback is sent again
// after a 502: discordgo's default.
const callbackRetries = 3

// callbackBound bounds an interaction's callback, its retries included:
// Discord takes none later than its window, which began before it.
const callbackBound = responseWindow

// onGateway handles an INTERACTION_CREATE: dropped if seen before (a
// resume can replay it), else answered through the callback endpoint. Its
// budget runs from here, before the dedupe, which spends from it too.
// One taken in hand is seen through, on its own budgets, even if ctx
// (Run's) ends meanwhile: it is marked seen, and Discord sends it to no
// other replica, so given up it would be a click lost, its clicker told
// the interaction failed (Run waits for it, handling).
func (a *Adapter) onGateway(ctx context.Context, ic *discordgo.InteractionCreate) {
	arrived := a.now()
	ctx = context.WithoutCancel(ctx)
	if ic == nil || ic.Interaction == nil || !a.firstSeen(ctx, ic.ID, arrived) {
		return
	}
	resp, held := a.respond(ctx, ic.Interaction, arrived)
	cctx, cancel := context.WithTimeout(ctx, callbackBound)
	defer cancel()
	// The SDK's retry after a 502 stays on here alone (New turns it off):
	// Discord takes one response per interaction and refuses a second
	// (40060), so a retry can never answer twice.
	if err := a.interactionRespond(ic.Interaction, resp, discordgo.WithContext(cctx), discordgo.WithRestRetries(callbackRetries)); err != nil {
		// The callback URL holds the interaction's token: log the
		// cause without it. A held card update falls due and edits
		// the card instead.
		a.log.Warn().Str("error", redact(err)).Msg("discord: could not answer an interaction")
		return
	}
	a.delivered(ctx, held)
}

// interactionRespond is the SDK's InteractionRespond, but for the rate
// limiter it goes through: one of its own, dropped with the call.
// discordgo keeps a bucket for every URL it calls for the life of the
// session, and an interaction's callback URL is its own (its id and its
// token), so the session's limiter kept one bucket per click, token and
// all, for as long as the process ran. Such a bucket limits nothing
// worth keeping: an interaction takes one response. (Discord exempts
// callbacks from the bot's global limit too, so a global pause the
// session's limiter took from a courier's 429 is not theirs to wait out
// on their first try.)
func (a *Adapter) interactionRespond(i *discordgo.Interaction, resp *discordgo.InteractionResponse, opts ...discordgo.RequestOption) error {
	body, err := discordgo.Marshal(resp)
	if err != nil {
		return err
	}
	endpoint := discordgo.EndpointInteractionResponse(i.ID, i.Token)
	_, err = a.s.RequestWithLockedBucket(http.MethodPost, endpoint, "application/json", body, discordgo.NewRatelimiter().LockBucket(endpoint), 0, opts...)
	return err
}

// redact describes an SDK error without the request URL, which for
// interaction callbacks and webhooks carries a token.
func redact(err error) string {
	var rl *discordgo.RateLimitError
	var re *discordgo.RESTError
	var ue *url.Error
	switch {
	case errors.As(err, &rl):
		return "rate limited"
	case errors.As(err, &re):
		msg := ""
		if re.Response != nil {
			msg = re.Response.Status
		}
		if re.Message != nil {
			msg += fmt.Sprintf(" (code %d: %s)", re.Message.Code, re.Message.Message)
		}
		return msg
	case errors.As(err, &ue):
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

package telegram

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/askbridge/askbridge/adapters/internal/apierror"
	"github.com/askbridge/askbridge/core"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// maxUpdateBytes bounds a webhook body; updates are a few kilobytes.
const maxUpdateBytes = 1 << 20

// Mount adds POST /telegram/webhook in webhook mode (nothing in polling
// mode).
func (a *Adapter) Mount(mux *http.ServeMux) {
	if a.opts.WebhookSecret == "" {
		return
	}
	mux.Handle("POST "+WebhookPath, http.HandlerFunc(a.serveWebhook))
}

// serveWebhook checks the secret token in constant time (a mismatch is 401
// and changes nothing), drops repeated update ids, and handles the update
// before answering, so Telegram's retry of a failed delivery is the only
// redelivery: an update not done with (handle) is answered 503, for
// Telegram to send it again. An update that arrives while Run's getMe is still on its way
// waits for it (bounded, then 503). Anything else past the secret check
// gets 200: a malformed, oversized or unwanted update is not improved by
// Telegram retrying it (unreadable logs one by its id alone). Only a body
// cut short on its way gets 400.
func (a *Adapter) serveWebhook(w http.ResponseWriter, r *http.Request) {
	got := r.Header.Get(SecretHeader)
	if subtle.ConstantTimeCompare([]byte(got), []byte(a.opts.WebhookSecret)) != 1 {
		apierror.Write(w, http.StatusUnauthorized, core.CodeForbidden, "bad secret token")
		return
	}
	if !a.awaitReady(r.Context()) {
		// getMe has not answered, so the bot's id, which keys the
		// update, is unknown: Telegram retries a 503.
		apierror.Write(w, http.StatusServiceUnavailable, core.CodeInternal, "the Telegram adapter is not ready yet")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxUpdateBytes))
	if big := (*http.MaxBytesError)(nil); errors.As(err, &big) {
		a.unreadable(nil, err)
		w.WriteHeader(http.StatusOK) // the same again would be as long
		return
	}
	if err != nil {
		// The body was cut short on the way: Telegram, if still
		// listening, sends it again.
		apierror.Write(w, http.StatusBadRequest, core.CodeInvalid, "not an update")
		return
	}
	u, err := decodeUpdate(body)
	if err != nil {
		// Skipped, as the poller skips one: answered with anything but
		// a 2xx, Telegram would send it again and again.
		a.unreadable(body, err)
		w.WriteHeader(http.StatusOK)
		return
	}
	// Telegram redelivers an update it thinks failed; whichever replica
	// gets it, it is handled once (handle drops a repeat: sight). The
	// update is handled even if Telegram hangs up meanwhile. One not done
	// with (another handling has it in hand; one that failed on the store
	// was told so, as again says) is answered with an error, so that
	// Telegram sends it again later rather than counting it delivered.
	if !a.handle(context.WithoutCancel(r.Context()), u) {
		apierror.Write(w, http.StatusServiceUnavailable, core.CodeInternal, "the update is not handled yet; send it again")
		return
	}
	w.WriteHeader(http.StatusOK)
}

// seenHold is how long an update's claim lasts while it is handled
// (sight): past the budgets of its handling (handle's, and a tap's work's
// own), so that a copy of it never runs beside it, and short, as a claim
// whose holder died holds the update back until it lapses. A tap's, in
// webhook mode, is shorter still and renewed while it is handled
// (tapClaim).
const seenHold = 2 * handleTimeout

// seenFor is how long an update handled is known as such: Telegram keeps
// an update it could not deliver for a day.
const seenFor = 24 * time.Hour

// sight claims update u for its handling: an update comes again when
// Telegram redelivers one it thinks failed (webhook), or when a poller
// handled it but could not store the offset past it, or lost its lease
// first, or died before it could (polling). Whichever replica and door
// it comes through, it is handled once, and an update whose handling
// never finished is handled when it comes again (settle). The claim
// lasts hold unless renewed (keep).
func (a *Adapter) sight(ctx context.Context, u tgbotapi.Update, hold time.Duration) core.Sighting {
	return a.svc.Sight(ctx, fmt.Sprintf("telegram:%d:update:%d", a.bot.Self.ID, u.UpdateID), hold, seenFor)
}

// settle ends sighting g of an update whose handling came to err, and
// reports whether the update is done with. One whose handling failed on
// the store, to be handled again (again), was not recorded, or not known
// to be, and its writer was told nothing: its claim is released, so that
// the update is handled when it comes again. Anything else (answered,
// refused, told why not) is confirmed handled.
func (a *Adapter) settle(ctx context.Context, g core.Sighting, err error) bool {
	if a.again(ctx, err) {
		a.log.Warn().Err(err).Msg("telegram: an update's handling failed on the store; it is handled again when it comes again")
		g.Unhandled(ctx)
		return false
	}
	g.Handled(ctx)
	return true
}

// again reports whether err, what an update's handling came to, leaves
// the update to be handled again rather than its writer told (settle):
// a failure of the store (core.HandleAgain) while polling, as the poller
// stores no offset past the update and so is sure to fetch it again,
// once the store answers, unless ctx is the update's last try
// (lastTry). Telegram retries a webhook's update only "a reasonable
// amount of" times, so in webhook mode the writer is told at once that
// it was not recorded and to try again, lest a reply be lost with
// nothing said.
func (a *Adapter) again(ctx context.Context, err error) bool {
	return a.opts.WebhookSecret == "" && ctx.Value(lastTryKey{}) == nil && core.HandleAgain(err)
}

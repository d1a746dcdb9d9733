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
// redelivery. An update that arrives while Run's getMe is still on its way
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
	// gets it, it is handled once (handle drops a repeat: firstSeen).
	// The update is handled even if Telegram hangs up meanwhile.
	a.handle(context.WithoutCancel(r.Context()), u)
	w.WriteHeader(http.StatusOK)
}

// firstSeen reports whether update u is new: an update comes again when
// Telegram redelivers one it thinks failed (webhook), or when a poller
// handled it but could not store the offset past it, or lost its lease
// first (polling). Whichever replica and door it comes through, it is
// handled once.
func (a *Adapter) firstSeen(ctx context.Context, u tgbotapi.Update) bool {
	return a.svc.FirstSeen(ctx, fmt.Sprintf("telegram:%d:update:%d", a.bot.Self.ID, u.UpdateID), 24*time.Hour)
}

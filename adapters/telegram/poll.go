package telegram

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// allowedUpdates are the update kinds the adapter handles.
var allowedUpdates = []string{"message", "callback_query"}

func (a *Adapter) offsetKey() string {
	return "telegram:" + strconv.FormatInt(a.bot.Self.ID, 10) + ":offset"
}
func (a *Adapter) leaseKey() string {
	return "telegram:" + strconv.FormatInt(a.bot.Self.ID, 10) + ":poller"
}

// PollState is what the poller keeps in the store (core.Values has it):
// the getUpdates offset, and the lease that lets one replica alone poll.
type PollState interface {
	Value(ctx context.Context, key string) (string, error)
	SetValue(ctx context.Context, key, val string) error
	Lease(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	Release(ctx context.Context, key, owner string) error
}

// The polling state lives in the store's core.Values: the getUpdates
// offset under offsetKey, so a restart neither loses nor replays updates,
// and the lease under leaseKey, so only one replica polls (Telegram
// answers a second poller with 409).

// poll long-polls getUpdates in its own loop (tgbotapi's GetUpdatesChan
// has no context, keeps the offset in memory and retries a 409 every 3s
// for ever). Each round renews the lease first; a replica without it
// waits. The offset is stored after each handled update.
func (a *Adapter) poll(ctx context.Context) error {
	kv, owner := a.opts.KV, a.opts.Owner
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := kv.Release(rctx, a.leaseKey(), owner); err != nil {
			a.log.Warn().Err(err).Msg("telegram: releasing the polling lease failed")
		}
	}()
	leader, webhookCleared := false, false
	failures := 0
	fail := func(err error, what string) bool {
		a.log.Warn().Err(err).Int("failures", failures+1).Msg("telegram: " + what)
		d := backoff(failures, err)
		failures++
		return a.sleep(ctx, d)
	}
	for ctx.Err() == nil {
		ok, err := kv.Lease(ctx, a.leaseKey(), owner, a.opts.LeaseTTL)
		if err != nil {
			if ctx.Err() != nil || !fail(err, "polling lease") {
				break
			}
			continue
		}
		if !ok {
			if leader {
				a.log.Info().Msg("telegram: another replica now polls")
			}
			leader = false
			if !a.sleep(ctx, a.opts.LeaseTTL/3) {
				break
			}
			continue
		}
		if !leader {
			a.log.Info().Msg("telegram: this replica polls for updates")
			leader = true
		}
		if !webhookCleared {
			// A webhook left set makes every getUpdates fail with 409.
			if _, err := a.api(ctx).Request(tgbotapi.DeleteWebhookConfig{}); err != nil {
				if ctx.Err() != nil || !fail(err, "deleteWebhook") {
					break
				}
				continue
			}
			webhookCleared = true
		}
		raw, err := kv.Value(ctx, a.offsetKey())
		if err != nil {
			if ctx.Err() != nil || !fail(err, "reading the polling offset") {
				break
			}
			continue
		}
		offset, _ := strconv.Atoi(raw)
		cfg := tgbotapi.UpdateConfig{Offset: offset, Timeout: int(a.opts.PollTimeout / time.Second), AllowedUpdates: allowedUpdates}
		if cfg.Timeout < 1 {
			cfg.Timeout = 1
		}
		updates, err := a.api(ctx).GetUpdates(cfg)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			var te *tgbotapi.Error
			if errors.As(err, &te) && te.Code == http.StatusConflict {
				// Another poller (or a webhook) has the token: back off,
				// doubling, rather than fight it every round.
				if !fail(err, "getUpdates conflict (another poller or a webhook)") {
					break
				}
				continue
			}
			if !fail(err, "getUpdates") {
				break
			}
			continue
		}
		failures = 0
		renewed := time.Now()
		for _, u := range updates {
			if u.UpdateID < offset {
				continue // already handled
			}
			if time.Since(renewed) > a.opts.LeaseTTL/3 {
				if ok, err := kv.Lease(ctx, a.leaseKey(), owner, a.opts.LeaseTTL); err != nil || !ok {
					break // lost the lease: the next holder fetches the rest
				}
				renewed = time.Now()
			}
			a.handle(ctx, u)
			offset = u.UpdateID + 1
			if err := kv.SetValue(ctx, a.offsetKey(), strconv.Itoa(offset)); err != nil {
				a.log.Warn().Err(err).Msg("telegram: storing the polling offset failed")
				break
			}
		}
	}
	return nil
}

package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/core/card"
	"github.com/askbridge/askbridge/core/loops"
	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// allowedUpdates are the update kinds the adapter handles, for
// getUpdates and setWebhook alike: edited_message so that the writer of
// an answer who edits it is told it stands (onEdit).
var allowedUpdates = []string{"message", "edited_message", "callback_query"}

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

// poll long-polls getUpdates on whichever replica holds the polling
// lease (loops.Leader): the holder renews it every second or so, the others
// try as often, so a poller that dies is replaced within about five
// seconds, and one that stops releases the lease at once. tgbotapi's
// GetUpdatesChan is not used: it has no context, keeps the offset in
// memory and retries a 409 every 3s for ever.
func (a *Adapter) poll(ctx context.Context) error {
	key := a.leaseKey()
	loops.Leader{Leases: a.opts.KV, Key: key, Owner: a.opts.Owner, TTL: a.opts.LeaseTTL,
		OnChange: func(held bool) {
			if held {
				a.log.Info().Msg("telegram: this replica polls for updates")
			} else {
				a.log.Info().Msg("telegram: this replica no longer polls")
			}
		},
		OnError: func(err error) {
			a.log.Error().Err(err).Str("lease", key).
				Msg("telegram: the polling lease's store is failing; this replica does not poll until it answers")
		},
		OnRecover: func(failed int, down time.Duration) {
			a.log.Info().Str("lease", key).Int("failed_calls", failed).Dur("down", down).
				Msg("telegram: the polling lease's store answers again")
		},
	}.Run(ctx, a.pollHeld)
	return nil
}

// pollHeld polls while this replica holds the lease; ctx ends when it is
// lost (the getUpdates in flight is cut short with it). The offset is
// read from the store at each round and stored after each handled update,
// so the next holder resumes where this one stopped; an update handled
// just before a takeover, or whose offset could not be stored, is
// recognised by its id when it comes again (sight), and one whose
// handling never finished (a replica that died with it, a store that
// failed it) is not stored past, so that it comes again and is handled;
// one the store still fails after heldTries fetches is handled a last
// time (lastTry), its writer told it was not recorded, and a tap after
// tapTries, while its tapper can still be answered. A tap that a dead
// holder's claim keeps back has its tapper answered meanwhile
// (answerHeld).
func (a *Adapter) pollHeld(ctx context.Context) {
	kv := a.opts.KV
	webhookCleared := false
	failures := 0
	seen := map[int]*fetched{} // update id -> what its fetches came to, while not done with
	fail := func(err error, what string) bool {
		a.log.Warn().Err(err).Int("failures", failures+1).Msg("telegram: " + what)
		d := backoff(failures, err)
		failures++
		return a.sleep(ctx, d)
	}
	for ctx.Err() == nil {
		if !webhookCleared {
			// A webhook left set makes every getUpdates fail with 409.
			if _, err := a.api(ctx).Request(tgbotapi.DeleteWebhookConfig{}); err != nil {
				if ctx.Err() != nil || !fail(err, "deleteWebhook") {
					return
				}
				continue
			}
			webhookCleared = true
		}
		raw, err := kv.Value(ctx, a.offsetKey())
		if err != nil {
			if ctx.Err() != nil || !fail(err, "reading the polling offset") {
				return
			}
			continue
		}
		offset, _ := strconv.Atoi(raw)
		cfg := tgbotapi.UpdateConfig{Offset: offset, Timeout: int(a.opts.PollTimeout / time.Second), AllowedUpdates: allowedUpdates}
		if cfg.Timeout < 1 {
			cfg.Timeout = 1
		}
		updates, err := a.getUpdates(ctx, cfg)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var te *tgbotapi.Error
			if errors.As(err, &te) && te.Code == http.StatusConflict {
				// Another poller (or a webhook) has the token: back off,
				// doubling, rather than fight it every round.
				if !fail(err, "getUpdates conflict (another poller or a webhook)") {
					return
				}
				continue
			}
			if !fail(err, "getUpdates") {
				return
			}
			continue
		}
		failures = 0
		held := false // an update of this batch is not done with
		for _, u := range updates {
			if u.UpdateID < offset {
				continue // already handled
			}
			if ctx.Err() != nil {
				return // lost the lease: the next holder fetches the rest
			}
			// An update taken in hand is seen through, even if the
			// lease goes meanwhile, and its offset stored, on a budget of
			// its own: a slow handling does not cost the offset's write.
			// handle drops an update handled before (sight).
			f := seen[u.UpdateID]
			if f == nil {
				f = &fetched{}
			}
			hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			if f.tries >= heldTries || u.CallbackQuery != nil && f.tries >= tapTries {
				hctx = lastTry(hctx)
			}
			done := a.handle(context.WithValue(hctx, fetchedKey{}, f), u)
			cancel()
			if done {
				delete(seen, u.UpdateID)
			} else {
				f.tries++
				seen[u.UpdateID] = f
			}
			if held || !done {
				// The offset stays at the first update not done with
				// (another handling has it in hand, or its handling
				// failed on the store), so Telegram sends it again; the
				// updates after it are handled meanwhile, and dropped
				// as handled when they come again with it.
				held = true
				continue
			}
			offset = u.UpdateID + 1
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			err := kv.SetValue(sctx, a.offsetKey(), strconv.Itoa(offset))
			cancel()
			if err != nil {
				a.log.Warn().Err(err).Msg("telegram: storing the polling offset failed")
				break
			}
		}
		if held && !a.sleep(ctx, heldAgain) {
			return
		}
	}
}

// heldAgain is how long the poller waits before it fetches an update
// again that was not done with: one whose claim a dead replica left is
// handled once the claim lapses (seenHold), one whose store failed once
// the store answers, and meanwhile getUpdates, which returns it at once,
// is not called in a loop.
const heldAgain = time.Second

// heldTries is how often the poller fetches an update again whose
// handling failed on the store before it handles it a last time
// (lastTry): some two minutes and more at heldAgain, long past a dead
// replica's claim (seenHold) and a store's failover. Held back for good,
// the update would hold the offset until Telegram drops it a day later,
// and every update more than getUpdates' hundred after it with it.
const heldTries = 120

// tapTries is heldTries for a tap: its callback query has its tapper
// watch a spinner until it is answered, and Telegram refuses an answer
// that comes too late ("query is too old and response timeout expired",
// after some seconds it does not publish). Fetched again heldAgain
// apart, a tap whose store work failed is tried again for about its
// answerBudget, so a store's blip is recorded, and then handled a last
// time (lastTry) while an answer still reaches its tapper: that it was
// not recorded, or may not have been, and to try again.
const tapTries = int(answerBudget / heldAgain)

// heldTapTries is how many fetches, heldAgain apart, the poller finds a
// tap held by another handling before it answers the tapper itself
// (answerHeld): more than answerBudget's worth, within which a live
// holder answers the tap, so that an answer comes only when the holder
// died with it (or lost the lease and stalled). Its claim (seenHold)
// lasts a minute; the tap is handled, and recorded, once it lapses, but
// its tapper cannot be answered then. Telegram's Bot API gives no figure
// for how long an answer is taken: clients "display a progress bar until
// you call answerCallbackQuery" (core.telegram.org/bots/api#callbackquery),
// TDLib's getCallbackQueryAnswer fails "if the bot fails to answer the
// query before the query timeout expires", and measured, an answer is
// refused ("query is too old and response timeout expired") after about
// 15 s (gist.github.com/d-Rickyy-b/f789c75228bf00f572eec4450ed0d7c9). A
// holder that dies is replaced within about 5 s (loops.DefaultLeaseTTL),
// so its tapper is answered some 8 s after it died.
const heldTapTries = int(answerBudget/heldAgain) + 1

// fetched is what the poller knows of an update it has not done with,
// across its fetches (a map of pollHeld's): how often it fetched it, and,
// for a tap, whether it answered the tapper while another handling held
// it (answerHeld). A handling reads it from its context (fetchedKey).
type fetched struct {
	tries int
	told  bool
}

// fetchedKey carries an update's *fetched in its handling's context.
type fetchedKey struct{}

// answerHeld answers tap cq, which another handling holds (handle leaves
// it to come again), once the poller has found it so for heldTapTries
// fetches: its holder died with it, and nothing else answers its tapper
// while Telegram still takes an answer. The tapper is told the truth, that
// it may or may not be recorded (the holder may have recorded it before it
// died), once; the tap is handled when the claim lapses, and its tapper
// not answered again then (toldHeld). Only the poller counts fetches: a
// webhook's copy is retried when Telegram sees fit, and handled once the
// dead holder's claim, a short one there (tapClaim), has lapsed.
func (a *Adapter) answerHeld(ctx context.Context, cq *tgbotapi.CallbackQuery) {
	f, _ := ctx.Value(fetchedKey{}).(*fetched)
	if f == nil || f.told || f.tries < heldTapTries {
		return
	}
	f.told = true
	a.log.Warn().Msg("telegram: a tap another handling took in hand is unanswered; its tapper was told it may or may not be recorded, and it is handled when that claim lapses")
	a.answerCallback(ctx, cq, card.TimedOutNote)
}

// toldHeld reports whether the tap handled on ctx was answered while
// another handling held it (answerHeld): Telegram would refuse a second
// answer.
func toldHeld(ctx context.Context) bool {
	f, _ := ctx.Value(fetchedKey{}).(*fetched)
	return f != nil && f.told
}

// lastTryKey marks the context of an update's last handling (lastTry).
type lastTryKey struct{}

// lastTry is ctx for an update's last handling while polling: a failure
// on the store is told to its writer then, as in webhook mode (again),
// and the update is done with.
func lastTry(ctx context.Context) context.Context {
	return context.WithValue(ctx, lastTryKey{}, true)
}

// getUpdates is tgbotapi's GetUpdates with each update read by
// decodeUpdate, which keeps the forum topic fields v5.5.1 does not know.
// An update that cannot be read keeps its id alone, so the offset moves
// past it, and is logged (unreadable).
func (a *Adapter) getUpdates(ctx context.Context, cfg tgbotapi.UpdateConfig) ([]incoming, error) {
	resp, err := a.api(ctx).Request(cfg)
	if err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(resp.Result, &raws); err != nil {
		return nil, err
	}
	out := make([]incoming, 0, len(raws))
	for _, raw := range raws {
		u, err := decodeUpdate(raw)
		if err != nil {
			var ok bool
			if u, ok = a.unreadable(raw, err); !ok {
				return nil, err
			}
		}
		out = append(out, u)
	}
	return out, nil
}

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/adapters/telegram"
	"github.com/askbridge/askbridge/core"
)

func init() { chatAdapters = append(chatAdapters, openTelegram) }

// openTelegram turns the Telegram adapter on when TELEGRAM_BOT_TOKEN is
// set. TELEGRAM_WEBHOOK_SECRET selects webhook mode (with
// TELEGRAM_WEBHOOK_URL, the public URL Telegram POSTs to); without it the
// adapter long-polls, one replica at a time, keeping its offset and lease
// in the store. TELEGRAM_API_URL points it at another Bot API server
// (tgbotapi's endpoint format, "…/bot%s/%s").
func openTelegram(ctx context.Context, s Settings, svc *core.Service, log zerolog.Logger) (chatAdapter, error) {
	token := Secret(s.env("TELEGRAM_BOT_TOKEN"))
	if token == "" {
		return nil, nil
	}
	if !strings.Contains(token.Reveal(), ":") {
		return nil, errors.New("TELEGRAM_BOT_TOKEN: not a bot token (<bot id>:<secret>, from @BotFather)")
	}
	opts := telegram.Options{
		Token:         token.Reveal(),
		APIEndpoint:   s.env("TELEGRAM_API_URL"),
		WebhookSecret: s.env("TELEGRAM_WEBHOOK_SECRET"),
		WebhookURL:    s.env("TELEGRAM_WEBHOOK_URL"),
		Log:           log.With().Str("surface", "telegram").Logger(),
	}
	if e := opts.APIEndpoint; e != "" && strings.Count(e, "%s") != 2 {
		return nil, errors.New("TELEGRAM_API_URL: must hold two %s, for the token and the method (https://api.telegram.org/bot%s/%s)")
	}
	if opts.WebhookSecret != "" {
		u, err := url.Parse(opts.WebhookURL)
		if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
			return nil, errors.New("TELEGRAM_WEBHOOK_URL: webhook mode (TELEGRAM_WEBHOOK_SECRET is set) needs the public URL of " + telegram.WebhookPath)
		}
		if len(opts.WebhookSecret) > 256 || strings.Trim(opts.WebhookSecret, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
			return nil, errors.New("TELEGRAM_WEBHOOK_SECRET: 1-256 characters of A-Z, a-z, 0-9, _ and -")
		}
	} else {
		opts.KV = svc.Values()
		host, _ := os.Hostname()
		var b [4]byte
		_, _ = rand.Read(b[:])
		opts.Owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	open := func(ctx context.Context) (chatAdapter, error) {
		a, err := telegram.New(ctx, svc, opts)
		if err != nil {
			return nil, fmt.Errorf("TELEGRAM_BOT_TOKEN: %w", err)
		}
		return a, nil
	}
	a, err := open(ctx)
	var refused *tgbotapi.Error
	switch {
	case err == nil:
		return a, nil
	case errors.As(err, &refused):
		return nil, err // Telegram answered and said no: a bad token is a configuration error
	}
	// Telegram could not be reached: start without it, and keep trying.
	log.Warn().Err(err).Msg("telegram not reachable at start; the rest of askbridge starts, and telegram follows when it answers")
	late := &lateChat{surface: core.SurfaceTelegram, open: open, log: log, readyCh: make(chan struct{})}
	if opts.WebhookSecret != "" {
		late.path = "POST " + telegram.WebhookPath
	}
	return late, nil
}

// lateChat stands in for a chat adapter whose platform could not be
// reached at start, so one platform's outage does not keep the bridge
// down. Run keeps trying to open the real adapter; until it succeeds,
// deliveries wait (they are retried, not lost) and the platform's HTTP
// endpoint answers 503, which platforms retry.
type lateChat struct {
	surface core.Surface
	path    string // the HTTP pattern the adapter serves, if any
	open    func(context.Context) (chatAdapter, error)
	log     zerolog.Logger

	mu      sync.Mutex
	ready   chatAdapter
	mux     *http.ServeMux // the real adapter's endpoints, once it is open
	readyCh chan struct{}  // closed once ready is set
}

func (l *lateChat) get() (chatAdapter, *http.ServeMux) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ready, l.mux
}

var errNotYet = errors.New("the platform has not answered since askbridge started")

// lateWait bounds how long a delivery waits for the adapter to open before
// it is handed back; well under the outbox's idle limit, so no other
// replica takes it over meanwhile.
const lateWait = 20 * time.Second

// adapter waits (bounded) for the real adapter, so a delivery goes out as
// soon as the platform answers rather than at its next retry.
func (l *lateChat) adapter(ctx context.Context) (chatAdapter, error) {
	t := time.NewTimer(lateWait)
	defer t.Stop()
	select {
	case <-l.readyCh:
		a, _ := l.get()
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, &core.RetryAfter{After: time.Second, Err: errNotYet}
	}
}

func (l *lateChat) Surface() core.Surface { return l.surface }

func (l *lateChat) Post(ctx context.Context, q *core.Question, card core.MessageRef) (core.MessageRef, error) {
	a, err := l.adapter(ctx)
	if err != nil {
		return core.MessageRef{}, err
	}
	return a.Post(ctx, q, card)
}

func (l *lateChat) Update(ctx context.Context, q *core.Question, card core.MessageRef) error {
	a, err := l.adapter(ctx)
	if err != nil {
		return err
	}
	return a.Update(ctx, q, card)
}

func (l *lateChat) Remind(ctx context.Context, q *core.Question, room string) error {
	a, err := l.adapter(ctx)
	if err != nil {
		return err
	}
	return a.Remind(ctx, q, room)
}

func (l *lateChat) Digest(ctx context.Context, d core.Digest, room string) error {
	a, err := l.adapter(ctx)
	if err != nil {
		return err
	}
	return a.Digest(ctx, d, room)
}

func (l *lateChat) Mount(mux *http.ServeMux) {
	if l.path == "" {
		return
	}
	mux.HandleFunc(l.path, func(w http.ResponseWriter, r *http.Request) {
		if _, inner := l.get(); inner != nil {
			inner.ServeHTTP(w, r)
			return
		}
		httpapi.WriteError(w, http.StatusServiceUnavailable, core.CodeInternal, "the Telegram adapter is not ready yet")
	})
}

// Run opens the adapter, retrying with a growing pause, then runs it.
func (l *lateChat) Run(ctx context.Context) error {
	pause := time.Second
	for {
		a, err := l.open(ctx)
		if err == nil {
			inner := http.NewServeMux()
			a.Mount(inner)
			l.mu.Lock()
			l.ready, l.mux = a, inner
			l.mu.Unlock()
			close(l.readyCh)
			l.log.Info().Str("surface", string(l.surface)).Msg("chat adapter on, after a late start")
			return a.Run(ctx)
		}
		l.log.Warn().Err(err).Dur("retry_in", pause).Str("surface", string(l.surface)).Msg("still not reachable")
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		pause = min(2*pause, time.Minute)
	}
}

package telegram

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits are token buckets for what the bot sends. Telegram's bot FAQ:
// about one message a second per chat (short bursts pass), twenty a minute
// per group, thirty a second overall; beyond them it answers 429.
type Limits struct {
	PerChat      rate.Limit // default 1/s
	PerChatBurst int        // default 3
	PerGroup     rate.Limit // groups (negative chat ids), default 20/min
	GroupBurst   int        // default 5
	Global       rate.Limit // default 30/s
	GlobalBurst  int        // default 30
}

func (l Limits) withDefaults() Limits {
	if l.PerChat == 0 {
		l.PerChat, l.PerChatBurst = 1, 3
	}
	if l.PerGroup == 0 {
		l.PerGroup, l.GroupBurst = rate.Limit(20.0/60), 5
	}
	if l.Global == 0 {
		l.Global, l.GlobalBurst = 30, 30
	}
	l.PerChatBurst, l.GroupBurst, l.GlobalBurst = max(l.PerChatBurst, 1), max(l.GroupBurst, 1), max(l.GlobalBurst, 1)
	return l
}

// maxChats bounds the per-chat buckets kept; idle (full) ones are dropped
// first.
const maxChats = 4096

type limiter struct {
	l      Limits
	global *rate.Limiter
	mu     sync.Mutex
	chats  map[int64]*chatLimit
}

type chatLimit struct{ chat, group *rate.Limiter }

func newLimiter(l Limits) *limiter {
	l = l.withDefaults()
	return &limiter{l: l, global: rate.NewLimiter(l.Global, l.GlobalBurst), chats: map[int64]*chatLimit{}}
}

func (lm *limiter) forChat(chat int64) *chatLimit {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	c := lm.chats[chat]
	if c != nil {
		return c
	}
	if len(lm.chats) >= maxChats {
		for id, old := range lm.chats {
			if old.chat.Tokens() >= float64(lm.l.PerChatBurst) && (old.group == nil || old.group.Tokens() >= float64(lm.l.GroupBurst)) {
				delete(lm.chats, id)
			}
		}
	}
	c = &chatLimit{chat: rate.NewLimiter(lm.l.PerChat, lm.l.PerChatBurst)}
	if chat < 0 {
		c.group = rate.NewLimiter(lm.l.PerGroup, lm.l.GroupBurst)
	}
	lm.chats[chat] = c
	return c
}

// wait blocks until a message to chat is within every limit, or ctx ends.
func (lm *limiter) wait(ctx context.Context, chat int64) error {
	return lm.waitOn(ctx, chat, true)
}

// waitEdit is wait for an edit of a message in chat. Telegram's limit per
// group counts new messages, so an edit spends from its chat and the
// whole alone, as core's budgets have it (Adapter.Budgets).
func (lm *limiter) waitEdit(ctx context.Context, chat int64) error {
	return lm.waitOn(ctx, chat, false)
}

// waitOn waits on chat's bucket, its group's if group is set and chat is
// one, then the whole's, in that order, so the whole's token is taken
// only once the message may go.
func (lm *limiter) waitOn(ctx context.Context, chat int64, group bool) error {
	c := lm.forChat(chat)
	if err := c.chat.Wait(ctx); err != nil {
		return err
	}
	if group && c.group != nil {
		if err := c.group.Wait(ctx); err != nil {
			return err
		}
	}
	return lm.global.Wait(ctx)
}

// delay estimates how long a message to chat sent now would wait: the
// longest of its buckets' waits for a token, counting the sends already
// waiting on them. It takes nothing from the buckets.
func (lm *limiter) delay(chat int64, now time.Time) time.Duration {
	c := lm.forChat(chat)
	d := untilToken(lm.global, now)
	d = max(d, untilToken(c.chat, now))
	if c.group != nil {
		d = max(d, untilToken(c.group, now))
	}
	return d
}

// untilToken is how long after now l holds a whole token.
func untilToken(l *rate.Limiter, now time.Time) time.Duration {
	lim := l.Limit()
	if lim == rate.Inf {
		return 0
	}
	missing := 1 - l.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	if secs := missing / float64(lim); lim > 0 && secs < float64(math.MaxInt64/time.Second) {
		return time.Duration(secs * float64(time.Second))
	}
	return time.Duration(math.MaxInt64) // never, as far as a tap can wait
}

package telegram

import (
	"context"
	"crypto/subtle"
	"net/http"
	"sync"
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
// redelivery. Anything past the secret check gets 200: a malformed or
// unwanted update is not improved by Telegram retrying it.
func (a *Adapter) serveWebhook(w http.ResponseWriter, r *http.Request) {
	got := r.Header.Get(SecretHeader)
	if subtle.ConstantTimeCompare([]byte(got), []byte(a.opts.WebhookSecret)) != 1 {
		http.Error(w, "bad secret token", http.StatusUnauthorized)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxUpdateBytes)
	u, err := a.bot.HandleUpdate(r)
	if err != nil {
		http.Error(w, "not an update", http.StatusBadRequest)
		return
	}
	if !a.seen.add(u.UpdateID) {
		w.WriteHeader(http.StatusOK) // a repeat: already handled
		return
	}
	// The update is handled even if Telegram hangs up meanwhile.
	a.handle(context.WithoutCancel(r.Context()), *u)
	w.WriteHeader(http.StatusOK)
}

// recent is a bounded set of the last update ids seen, to drop webhook
// redeliveries. It is in memory and per replica: after a restart, or on
// another replica, a repeat is handled again, which core makes harmless
// (a second tap is told the question is already closed).
type recent struct {
	mu   sync.Mutex
	ids  map[int]struct{}
	ring []int
	next int
}

func newRecent(n int) *recent {
	return &recent{ids: make(map[int]struct{}, n), ring: make([]int, 0, n)}
}

// add reports whether id is new, and remembers it.
func (s *recent) add(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ids[id]; ok {
		return false
	}
	if len(s.ring) < cap(s.ring) {
		s.ring = append(s.ring, id)
	} else {
		delete(s.ids, s.ring[s.next])
		s.ring[s.next] = id
		s.next = (s.next + 1) % len(s.ring)
	}
	s.ids[id] = struct{}{}
	return true
}

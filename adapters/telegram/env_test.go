package telegram

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/telegram/telegramfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
	"github.com/rs/zerolog"
)

// newEnvIn is newEnvOn with the route's cards posted in rooms.
func newEnvIn(t *testing.T, kv PollState, st core.Store, rooms ...string) *env {
	t.Helper()
	svc := coretest.Service(t, st, opsRoute(rooms...))
	fake := telegramfake.Start(t, token)
	opts := Options{Token: token, APIEndpoint: fake.Endpoint(), Limits: fastLimits, Log: zerolog.Nop(), PollTimeout: time.Second}
	if kv == nil {
		opts.WebhookSecret, opts.WebhookURL = secret, "https://bridge.example/telegram/webhook"
	} else {
		opts.KV, opts.Owner = kv, "replica-1"
	}
	a, err := New(svc, opts)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, svc: svc, fake: fake, a: a, store: st}
	if kv == nil {
		mux := http.NewServeMux()
		a.Mount(mux)
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		fake.SetWebhookTarget(srv.URL + WebhookPath)
	}
	return e
}

// opsRoute is the configuration of an env's service: the route "ops",
// its cards posted in rooms, that Alice and Bob answer on Telegram (and
// anyone through the API). A second replica's service is built from it
// too, so that both decide alike.
func opsRoute(rooms ...string) coretest.Options {
	var in []core.Room
	for _, r := range rooms {
		in = append(in, core.Room{Surface: core.SurfaceTelegram, ID: r})
	}
	return coretest.Options{Routes: map[string]core.Route{"ops": {
		Rooms: in,
		Deciders: map[core.Surface][]string{
			core.SurfaceTelegram: {strconv.FormatInt(userAlice.ID, 10), strconv.FormatInt(userBob.ID, 10)},
			core.SurfaceAPI:      {"*"},
		},
	}}}
}

// room2 is a second group, for routes that post in two chats.
const room2 = int64(-1009876543210)

// cardIn waits for q's card in chat to satisfy cond, as card does in
// room.
func (e *env) cardIn(chat int64, id core.QuestionID, cond func(telegramfake.Message) bool) telegramfake.Message {
	e.t.Helper()
	var got telegramfake.Message
	if !e.fake.Wait(10*time.Second, func() bool {
		for _, m := range e.fake.Messages(chat) {
			if m.Keyboarded && e.isCard(m, id) {
				got = m
				return cond(m)
			}
		}
		return false
	}) {
		e.t.Fatalf("card of %s in %d: last seen %+v", id, chat, got)
	}
	return got
}

// sends lists the sendMessage requests into chat so far.
func (e *env) sends(chat int64) []telegramfake.Call {
	var out []telegramfake.Call
	for _, c := range e.fake.Calls() {
		if c.Method == "sendMessage" && c.Form.Get("chat_id") == strconv.FormatInt(chat, 10) {
			out = append(out, c)
		}
	}
	return out
}

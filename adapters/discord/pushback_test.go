package discord

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
)

// cloudflare429 is the page Cloudflare answers with while Discord's
// invalid-request ban (error 1015) holds an IP: HTML, no retry_after.
const cloudflare429 = `<!DOCTYPE html><html><head><title>Access denied | discord.com used Cloudflare to restrict access</title></head><body>Error 1015 You are being rate limited</body></html>`

// TestPushbackHonoured: a 429 is a wait the platform named and nothing
// posted, whatever its body: Cloudflare's HTML page (which the SDK cannot
// decode), or Discord's JSON without retry_after; the wait is the larger
// of the Retry-After header's and the body's. A 5xx naming a wait may
// still have come after the message was made: it stays of unknown
// outcome (no RetryAfter, which core reads as not posted) and carries the
// wait in its error.
func TestPushbackHonoured(t *testing.T) {
	for name, tc := range map[string]struct {
		status      int
		ctype, body string
		retryAfter  string // the header; "" sends none
		want        time.Duration
		unknown     bool // of unknown outcome, carrying want
	}{
		"429-html":               {429, "text/html", cloudflare429, "1800", 30 * time.Minute, false},
		"429-html-no-header":     {429, "text/html", cloudflare429, "", time.Second, false},
		"429-json-no-retry":      {429, "application/json", `{"code":0,"message":"You are being blocked from accessing our API temporarily due to exceeding our rate limits frequently."}`, "1800", 30 * time.Minute, false},
		"429-json-header-longer": {429, "application/json", `{"message":"You are being rate limited.","retry_after":1.5,"global":false}`, "60", time.Minute, false},
		"429-json-body-longer":   {429, "application/json", `{"message":"You are being rate limited.","retry_after":2.5,"global":false}`, "1", 2500 * time.Millisecond, false},
		"503-with-retry-after":   {503, "application/json", `{"code":0,"message":"upstream overloaded"}`, "1800", 30 * time.Minute, true},
		"502-with-retry-after":   {502, "text/html", `<html>502 Bad Gateway</html>`, "120", 2 * time.Minute, true},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", tc.ctype)
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			a, err := New(nil, Options{Token: "Bot t", APIURL: srv.URL + "/"})
			if err != nil {
				t.Fatal(err)
			}
			q := &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "a", Text: "?", State: core.StateOpen}
			_, err = a.Post(context.Background(), q, core.MessageRef{Room: "1", Kind: core.DeliverPost})
			var ra *core.RetryAfter
			var ns *core.NotSent
			var perm *core.Permanent
			// The drain keeps to the wait of any error that names one.
			var busy interface {
				error
				RetryWait() time.Duration
			}
			switch {
			case tc.unknown && (errors.As(err, &ra) || errors.As(err, &ns) || errors.As(err, &perm)):
				t.Errorf("a %d may come after the message was made; reported as not posted (%T): %v", tc.status, err, err)
			case tc.unknown && !errors.As(err, &busy):
				t.Errorf("a %d naming a wait lost it (%T): %v", tc.status, err, err)
			case tc.unknown && busy.RetryWait() != tc.want:
				t.Errorf("a %d asks the drain for a wait of %v, want %v", tc.status, busy.RetryWait(), tc.want)
			case tc.unknown:
			case !errors.As(err, &ra):
				t.Errorf("a %d is a wait and nothing posted, not %T: %v", tc.status, err, err)
			case ra.After != tc.want:
				t.Errorf("a %d is honoured as a wait of %v, want %v", tc.status, ra.After, tc.want)
			}
		})
	}
}

// TestPushbackPerRequest: what one answer says about waiting reaches that
// request's error alone, however many requests are under way at once.
// The 429s are one route's (a 429 for the whole bot holds back every
// request: TestBotWide429HoldsEveryRoom).
func TestPushbackPerRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if strings.Contains(r.URL.Path, "/channels/429/") {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1800")
			w.Header().Set("X-RateLimit-Scope", "user")
			w.Header().Set("X-RateLimit-Bucket", "abcd1234")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"message":"You are being rate limited.","retry_after":1800,"global":false}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"900000000000000002","channel_id":"1","content":""}`)
	}))
	defer srv.Close()
	a, err := New(nil, Options{Token: "Bot t", APIURL: srv.URL + "/", RatePerSecond: 1000})
	if err != nil {
		t.Fatal(err)
	}
	q := &core.Question{ID: core.NewID(0), Kind: core.KindClarification, Agent: "a", Text: "?", State: core.StateOpen}
	var wg sync.WaitGroup
	errs := make([]error, 40)
	for i := range errs {
		wg.Go(func() {
			room := "200"
			if i%2 == 0 {
				room = "429"
			}
			_, errs[i] = a.Post(context.Background(), q, core.MessageRef{Room: room, Kind: core.DeliverPost})
		})
	}
	wg.Wait()
	for i, err := range errs {
		var ra *core.RetryAfter
		switch limited := errors.As(err, &ra); {
		case i%2 == 0 && (!limited || ra.After != 30*time.Minute):
			t.Errorf("post %d, refused with 429: %v", i, err)
		case i%2 == 1 && err != nil:
			t.Errorf("post %d, posted: %v", i, err)
		}
	}
}

// TestRefused429IsNoRepeat: end to end, one HTML 429 on the first post
// leaves the card that then goes out unmarked: Discord refused the first
// attempt and nothing was posted, so it is a retry, not a repeat.
func TestRefused429IsNoRepeat(t *testing.T) {
	r := newRig(t, rigOptions{})
	r.fake.Fail(http.MethodPost, "channels/"+roomID+"/messages", http.StatusTooManyRequests,
		`<html><title>Error 1015</title>You are being rate limited</html>`, http.Header{"Retry-After": {"1"}})
	q := r.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	m := r.card(q.ID, nil)
	if strings.Contains(m.Content, "Posted again") {
		t.Errorf("a refused (429) first post made the card say it was posted again:\n%s", m.Content)
	}
	if got := r.question(q.ID).Messages[0]; got.Repeat {
		t.Errorf("the card is recorded as a possible repeat: %+v", got)
	}
}

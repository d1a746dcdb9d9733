package core

import (
	"reflect"
	"strings"
	"testing"
)

// TestCallbackPrefixes: a URL is allowed under a prefix only with its
// scheme and host (port included) and a path that continues the
// prefix's at a "/"; and a callback URL carries no user or fragment.
func TestCallbackPrefixes(t *testing.T) {
	p := CallbackPrefixes{"https://hooks.example.test/ab", "https://ci.example.test:8443/", "http://127.0.0.1:9000/in/"}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]bool{
		"https://hooks.example.test/ab":              true,
		"https://hooks.example.test/ab/x?run=1":      true,
		"https://HOOKS.example.test/ab/x":            true,
		"https://hooks.example.test/abc":             false,
		"https://hooks.example.test/":                false,
		"http://hooks.example.test/ab/x":             false,
		"https://hooks.example.test:444/ab/x":        false,
		"https://hooks.example.test.evil.test/ab/x":  false,
		"https://ci.example.test:8443/anything":      true,
		"https://ci.example.test/anything":           false,
		"http://127.0.0.1:9000/in/x":                 true,
		"http://127.0.0.1:9000/inx":                  false,
		"https://u:p@hooks.example.test/ab/x":        false,
		"https://hooks.example.test/ab/x#frag":       false,
		"mailto:someone@hooks.example.test":          false,
		"/ab/x":                                      false,
		"https://hooks.example.test/ab/../../admin/": false,
		"https://hooks.example.test/ab/%2e%2e/admin": false,
	} {
		err := p.Check("callback_url", url)
		if (err == nil) != want {
			t.Errorf("%s: %v, want allowed=%v", url, err, want)
		}
		if err != nil && ErrorCode(err) != CodeInvalid {
			t.Errorf("%s: code %s", url, ErrorCode(err))
		}
	}
	if err := (CallbackPrefixes{}).Check("callback_url", "https://hooks.example.test/x"); err == nil {
		t.Error("with no prefixes, a callback was allowed")
	}
	for _, bad := range []string{"hooks.example.test", "ftp://x.test/", "https://u@x.test/", "https://x.test/#f"} {
		if err := (CallbackPrefixes{bad}).Validate(); err == nil {
			t.Errorf("prefix %q accepted", bad)
		}
	}
}

// TestCallbackRefusalsQuoteNoSecret: a refusal quotes the URL without
// its query, user info or fragment, which may carry a receiver's secret
// and would otherwise reach the logs and the event log.
func TestCallbackRefusalsQuoteNoSecret(t *testing.T) {
	p := CallbackPrefixes{"https://hooks.example.test/ab/"}
	for _, raw := range []string{
		"https://hooks.example.test/other?token=s3cr3t-token",
		"https://user:s3cr3t-token@hooks.example.test/ab/x",
		"https://hooks.example.test/ab/x?token=s3cr3t-token#frag",
		"https://hooks.example.test/ab/../x?token=s3cr3t-token",
		"ftp://hooks.example.test/ab/x?token=s3cr3t-token",
	} {
		err := p.Check("callback_url", raw)
		if err == nil {
			t.Fatalf("%s was allowed", raw)
		}
		if msg := err.Error(); strings.Contains(msg, "s3cr3t") || !strings.Contains(msg, "hooks.example.test") {
			t.Errorf("%s: refused as %q; want the host and no secret", raw, msg)
		}
	}
}

// TestNextWebhook: a change that closes a question with a callback URL
// enqueues its webhook after the card updates, under the key that is its
// event id; a change that leaves it open (a form item, a vote below the
// threshold) and a question without a callback enqueue none.
func TestNextWebhook(t *testing.T) {
	hooked := func(q *Question) { q.CallbackURL = "https://hooks.example.test/ab/1" }
	q := seed(KindClarification, hooked)
	c, err := Next(q, Transition{Resolution: &Resolution{State: StateAnswered, Answer: "yes"}, Now: nextNow})
	if err != nil {
		t.Fatal(err)
	}
	want := Delivery{Key: WebhookKey(q.ID), Kind: DeliverWebhook, Surface: SurfaceWebhook, Room: q.CallbackURL,
		QuestionID: q.ID, Route: q.Route, CreatedAt: nextNow}
	if len(c.Updates) != 3 || !reflect.DeepEqual(c.Updates[2], want) {
		t.Fatalf("updates %+v, want the two cards' then %+v", c.Updates, want)
	}

	form := seed(KindForm, hooked)
	c, err = Next(form, Transition{Items: []ItemAnswer{{ItemID: form.Items[0].ID, OptionID: form.Items[0].Options[0].ID}},
		Resolution: &Resolution{State: StateAnswered}, Now: nextNow})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.Updates {
		if d.Kind == DeliverWebhook {
			t.Fatalf("a form still open enqueued its webhook: %+v", c.Updates)
		}
	}

	plain := seed(KindClarification)
	c, err = Next(plain, Transition{Resolution: &Resolution{State: StateDeclined}, Now: nextNow})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.Updates {
		if d.Kind == DeliverWebhook {
			t.Fatalf("a question without a callback enqueued a webhook: %+v", c.Updates)
		}
	}
}

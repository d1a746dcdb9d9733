package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// sse is one message of an events stream, as a test reads it.
type sse struct {
	id, event string
	data      core.Event
}

// rawSSE is one message of a stream with its data as sent.
type rawSSE struct{ id, event, data string }

// scanSSE reads one message from the stream, skipping comments; err once
// the stream has ended.
func scanSSE(br *bufio.Reader) (rawSSE, error) {
	var m rawSSE
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return m, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && m.data != "":
			return m, nil
		case strings.HasPrefix(line, "id: "):
			m.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			m.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			m.data = line[6:]
		}
	}
}

// readSSE reads one message from the stream, skipping comments.
func readSSE(t *testing.T, br *bufio.Reader) sse {
	t.Helper()
	raw, err := scanSSE(br)
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	m := sse{id: raw.id, event: raw.event}
	if err := json.Unmarshal([]byte(raw.data), &m.data); err != nil {
		t.Fatalf("data %q: %v", raw.data, err)
	}
	return m
}

// readAll reads a stream that ends (follow=false).
func readAll(t *testing.T, body string) []sse {
	t.Helper()
	br := bufio.NewReader(strings.NewReader(body))
	var out []sse
	for {
		if _, err := br.Peek(1); err != nil {
			return out
		}
		out = append(out, readSSE(t, br))
	}
}

func TestEventsStream(t *testing.T) {
	e := newEnv(t)
	q1 := e.ask(agentA, "run-1")
	q2 := e.ask(agentA, "run-1")
	if _, err := e.as(operator).Answer(e.ctx(), q1, client.AnswerRequest{Answer: "yes"}); err != nil {
		t.Fatal(err)
	}

	r := e.do("GET", "/v1/events?follow=false", &observer, "")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %d %v %s", r.status, r.header, r.body)
	}
	all := readAll(t, string(r.body))
	var kinds []string
	for i, m := range all {
		kinds = append(kinds, m.event+":"+string(m.data.QuestionID))
		if m.id != strconv.FormatInt(m.data.Seq, 10) || m.event != string(m.data.Kind) {
			t.Errorf("message %d: id %q event %q for %+v", i, m.id, m.event, m.data)
		}
		if i > 0 && m.data.Seq <= all[i-1].data.Seq {
			t.Errorf("seq does not increase at %d", i)
		}
	}
	want := []string{"asked:" + string(q1), "asked:" + string(q2), "answered:" + string(q1)}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v", kinds, want)
	}

	// since skips what the client has; Last-Event-ID wins over since, as a
	// reconnecting EventSource sends it with the original URL.
	r = e.do("GET", "/v1/events?follow=false&since="+all[0].id, &observer, "")
	if got := readAll(t, string(r.body)); len(got) != 2 || got[0].id != all[1].id {
		t.Errorf("since %s: %v", all[0].id, got)
	}
	r = e.do("GET", "/v1/events?follow=false&since=0", &observer, "", "Last-Event-ID", all[1].id)
	if got := readAll(t, string(r.body)); len(got) != 1 || got[0].id != all[2].id {
		t.Errorf("Last-Event-ID %s: %v", all[1].id, got)
	}
	r = e.do("GET", "/v1/events?follow=false&since="+all[2].id, &observer, "")
	if r.status != 200 || len(r.body) != 0 {
		t.Errorf("nothing new: %d %q", r.status, r.body)
	}
	for _, c := range []struct {
		query string
		hdr   []string
		want  string
	}{
		{"since=-1", nil, "since"},
		{"since=x", nil, "since"},
		{"follow=maybe", nil, "follow"},
		{"", []string{"Last-Event-ID", "abc"}, "Last-Event-ID"},
	} {
		r := e.do("GET", "/v1/events?"+c.query, &observer, "", c.hdr...)
		if r.status != 400 || !strings.Contains(errorOf(t, r).Message, c.want) {
			t.Errorf("%s %v: %d %s", c.query, c.hdr, r.status, r.body)
		}
	}

	// The client reads the same without following.
	evs, err := e.as(operator).Events(e.ctx(), all[0].data.Seq)
	if err != nil || len(evs) != 2 || evs[1].Kind != core.EventAnswered {
		t.Fatalf("client events: %+v, %v", evs, err)
	}

	// Following: the stream resumes after Last-Event-ID, then carries what
	// happens next, until the client goes away.
	ctx, cancel := context.WithCancel(e.ctx())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+observer.Secret)
	req.Header.Set("Last-Event-ID", all[0].id)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for _, m := range all[1:] {
		if got := readSSE(t, br); got.id != m.id {
			t.Fatalf("resumed stream gave %s, want %s", got.id, m.id)
		}
	}
	if _, err := e.as(agentA).Cancel(e.ctx(), q2, ""); err != nil {
		t.Fatal(err)
	}
	next := readSSE(t, br)
	if next.event != string(core.EventCancelled) || next.data.QuestionID != q2 {
		t.Fatalf("followed event: %+v", next)
	}
	// Going away ends the stream (the server's Close, at cleanup, waits
	// for the handler to return).
	cancel()
	for err == nil {
		_, err = br.ReadString('\n')
	}
}

// TestEventsCutShortIsAnError: the log read without following, whose
// read fails after its first page has gone out, is an error for the
// client, not a short log: before, the response ended cleanly, and
// "askbridge events" printed the first page and exited 0.
func TestEventsCutShortIsAnError(t *testing.T) {
	e := newEnvOn(t, &eventsFailAfterAPage{Store: coretest.OpenStore(t)})
	evs, err := e.as(admin).Events(e.ctx(), 0)
	if err == nil {
		t.Fatalf("events cut short by a store failure: %d events and no error", len(evs))
	}
	if !strings.Contains(e.logs.String(), "events stream: reading the log failed") {
		t.Errorf("the failed read is not logged: %s", e.logs.String())
	}
}

func TestDigestAndDirective(t *testing.T) {
	e := newEnv(t)
	start := time.Now().Add(-time.Minute).UTC()
	q1 := e.ask(agentA, "run-1")
	e.ask(agentA, "run-1")
	if _, err := e.as(operator).Answer(e.ctx(), q1, client.AnswerRequest{Answer: "yes"}); err != nil {
		t.Fatal(err)
	}
	d, err := e.as(observer).Digest(e.ctx(), client.DigestQuery{Since: start, Until: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Asked) != 2 || len(d.Closed) != 1 || len(d.Open) != 1 || d.Closed[0].ID != q1 {
		t.Fatalf("digest: asked %d closed %d open %d", len(d.Asked), len(d.Closed), len(d.Open))
	}
	// A card on a one-way door names its recipient by the door alone, as
	// the questions' own view does; before, the digest showed an observer
	// the ntfy topic (a password) and the address in full.
	const topic = "s3cret-topic-of-alice"
	open := d.Open[0].ID
	if err := e.svc.RecordMessage(e.ctx(), open, core.MessageRef{Surface: core.SurfaceNtfy, Room: topic, ID: "m1", Delivery: string(open) + ":post:ntfy:" + topic, Kind: core.DeliverPost}); err != nil {
		t.Fatal(err)
	}
	r := e.do("GET", "/v1/digest?since="+start.Format(time.RFC3339), &observer, "")
	if r.status != 200 || strings.Contains(string(r.body), topic) || !strings.Contains(string(r.body), "an ntfy subscriber") {
		t.Errorf("the digest an observer reads: %d %s", r.status, r.body)
	}
	// A decider the route does not list sees nothing of it; lists stay [].
	r = e.do("GET", "/v1/digest?since="+start.Format(time.RFC3339)+"&decider=slack:U1", &operator, "")
	if r.status != 200 || !strings.Contains(string(r.body), `"asked":[]`) || !strings.Contains(string(r.body), `"open":[]`) {
		t.Errorf("digest for a stranger: %d %s", r.status, r.body)
	}
	for _, c := range []struct{ query, want string }{
		{"", "since is required"},
		{"since=yesterday", "since"},
		{"since=" + start.Format(time.RFC3339) + "&until=soon", "until"},
		{"since=" + start.Format(time.RFC3339) + "&decider=U1", "decider"},
		{"since=" + start.Format(time.RFC3339) + "&decider=irc:U1", "decider"},
		{"since=2030-01-01T00:00:00Z&until=2029-01-01T00:00:00Z", "before"},
	} {
		r := e.do("GET", "/v1/digest?"+c.query, &operator, "")
		if r.status != 400 || !strings.Contains(errorOf(t, r).Message, c.want) {
			t.Errorf("digest?%s: %d %s", c.query, r.status, r.body)
		}
	}

	text, err := e.as(agentA).Directive(e.ctx(), client.DirectiveQuery{Autonomy: "semi", Tier: "summary", Department: "data"})
	if err != nil || text == "" || !strings.HasSuffix(text, "Never drop a table without asking.") {
		t.Fatalf("directive: %q, %v", text, err)
	}
	other, err := e.as(agentA).Directive(e.ctx(), client.DirectiveQuery{Autonomy: "semi", Tier: "summary", Department: "web"})
	if err != nil || strings.Contains(other, "Never drop a table") {
		t.Fatalf("directive for another department: %q, %v", other, err)
	}
	for _, c := range []struct{ query, want string }{
		{"", "autonomy is required"},
		{"autonomy=reckless", "autonomy"},
		{"autonomy=full&tier=huge", "tier"},
	} {
		r := e.do("GET", "/v1/directive?"+c.query, &agentA, "")
		if r.status != 400 || !strings.Contains(errorOf(t, r).Message, c.want) {
			t.Errorf("directive?%s: %d %s", c.query, r.status, r.body)
		}
	}
}

// TestDigestPerPersonAndRole: person= keeps what a configured person may
// answer anywhere; decider= counts the roles given with it.
func TestDigestPerPersonAndRole(t *testing.T) {
	e := newEnv(t)
	start := time.Now().Add(-time.Minute).UTC()
	ask := func(route string) core.QuestionID {
		req := clarification("run-digest")
		req.ToolCallID, req.Route = nextCall(), route
		q, err := e.as(agentA).Ask(e.ctx(), req)
		if err != nil {
			t.Fatal(err)
		}
		return q.ID
	}
	leads, byRole := ask("leads"), ask("by-role")
	open := func(dq client.DigestQuery) []core.QuestionID {
		t.Helper()
		dq.Since = start
		d, err := e.as(observer).Digest(e.ctx(), dq)
		if err != nil {
			t.Fatalf("digest %+v: %v", dq, err)
		}
		var ids []core.QuestionID
		for _, q := range d.Open {
			ids = append(ids, q.ID)
		}
		return ids
	}
	if got := open(client.DigestQuery{Person: "alice"}); len(got) != 1 || got[0] != leads {
		t.Fatalf("alice's digest %v, want %s", got, leads)
	}
	if got := open(client.DigestQuery{Decider: "slack:U-alice"}); len(got) != 1 || got[0] != leads {
		t.Fatalf("alice's account's digest %v, want %s", got, leads)
	}
	if got := open(client.DigestQuery{Decider: "slack:U-other", Roles: []string{"S-leads"}}); len(got) != 1 || got[0] != byRole {
		t.Fatalf("role holder's digest %v, want %s", got, byRole)
	}
	if got := open(client.DigestQuery{Decider: "slack:U-other"}); len(got) != 0 {
		t.Fatalf("digest of a decider without the role: %v", got)
	}
	for _, c := range []struct{ query, want string }{
		{"&person=mallory", `no person named "mallory"`},
		{"&role=S-leads", "role is given with decider"},
	} {
		r := e.do("GET", "/v1/digest?since="+start.Format(time.RFC3339)+c.query, &operator, "")
		if r.status != 400 || !strings.Contains(errorOf(t, r).Message, c.want) {
			t.Errorf("digest%s: %d %s", c.query, r.status, r.body)
		}
	}
	dir, err := e.as(observer).People(e.ctx())
	if err != nil || len(dir.People) != 1 || dir.People[0].Name != "alice" || dir.People[0].Surfaces[0] != core.SurfaceSlack {
		t.Fatalf("people: %+v, %v", dir, err)
	}
}

package httpapi_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/adapters/httpapi"
	"github.com/askbridge/askbridge/core"
)

// follow opens a following events stream as tok from since=0 and returns
// its messages as they come; the channel closes when the response ends.
func (e *env) follow(tok httpapi.Token) <-chan rawSSE {
	e.t.Helper()
	ctx, cancel := context.WithCancel(e.ctx())
	e.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v1/events?since=0", nil)
	req.Header.Set("Authorization", "Bearer "+tok.Secret)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("events as %s: %d", tok.Name, resp.StatusCode)
	}
	out := make(chan rawSSE, 64)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		for {
			m, err := scanSSE(br)
			if err != nil {
				return
			}
			out <- m
		}
	}()
	return out
}

// about reports whether m is an event of question id.
func (m rawSSE) about(id core.QuestionID) bool {
	return strings.Contains(m.data, `"question_id":"`+string(id)+`"`)
}

// next is the stream's next message, or ok false once it has ended; a
// stream that says nothing for within fails the test.
func next(t *testing.T, ms <-chan rawSSE, within time.Duration) (rawSSE, bool) {
	t.Helper()
	select {
	case m, ok := <-ms:
		return m, ok
	case <-time.After(within):
		t.Fatalf("the stream neither sent nor ended within %s", within)
		return rawSSE{}, false
	}
}

// TestEventsStreamEndsWhenItsTokenNoLongerHolds: README, "a removed token
// stops working". A following stream is the caller's token at work for as
// long as it runs, so a reload that removes the token, gives it a new
// secret or a role that may not read events ends the stream before it
// carries anything more; a token the reload keeps as it was keeps its
// stream.
func TestEventsStreamEndsWhenItsTokenNoLongerHolds(t *testing.T) {
	for _, c := range []struct {
		name   string
		reload func(httpapi.Token) []httpapi.Token
	}{
		{"removed", func(httpapi.Token) []httpapi.Token { return []httpapi.Token{agentA, operator, admin} }},
		{"a new secret", func(w httpapi.Token) []httpapi.Token {
			w.Secret = "secret-observer-renewed-42"
			return []httpapi.Token{agentA, operator, admin, w}
		}},
		{"now an agent", func(w httpapi.Token) []httpapi.Token {
			w.Role = httpapi.RoleAgent
			return []httpapi.Token{agentA, operator, admin, w}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			q0 := e.ask(agentA, "run-1")
			watched, kept := e.follow(observer), e.follow(operator)
			for _, ms := range []<-chan rawSSE{watched, kept} {
				if m, ok := next(t, ms, 10*time.Second); !ok || !m.about(q0) {
					t.Fatalf("first message %+v (open %v), want q0's asked", m, ok)
				}
			}

			if err := e.api.Reconfigure(c.reload(observer), nil); err != nil {
				t.Fatal(err)
			}
			if r := e.do("GET", "/v1/events?follow=false", &observer, ""); r.status != http.StatusUnauthorized && r.status != http.StatusForbidden {
				t.Fatalf("a new request with the old observer token: %d", r.status)
			}
			// What happens after the reload, including words an agent
			// wrote, is no longer the old token's to read.
			q1 := e.ask(agentA, "run-1")
			if _, err := e.as(agentA).Cancel(e.ctx(), q1, "the secret plan changed"); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for {
				m, ok := next(t, watched, 5*time.Second)
				if !ok {
					break
				}
				t.Errorf("after the reload the stream still sent %s: %s", m.event, m.data)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("the stream ended %s after the reload, want within about a second", took)
			}
			// The operator's token holds: its stream goes on.
			if m, ok := next(t, kept, 10*time.Second); !ok || !m.about(q1) {
				t.Fatalf("the kept token's stream: %+v (open %v), want q1's asked", m, ok)
			}
		})
	}
}

// TestStillHoldsForADoorOutsideTheRoutes: the check a door outside the
// API's routes (the MCP door) makes as a long call goes on says false
// once a reload removed the token, gave it a new secret or a role the
// door is not open to, and true while it is kept as it was.
func TestStillHoldsForADoorOutsideTheRoutes(t *testing.T) {
	e := newEnv(t)
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer "+agentA.Secret)
	tok, _, ok := e.api.Admit(r)
	if !ok {
		t.Fatal("agent-a not admitted")
	}
	still := e.api.StillHolds(r, tok, httpapi.RoleAgent, httpapi.RoleAdmin)
	for _, c := range []struct {
		name   string
		tokens []httpapi.Token
		want   bool
	}{
		{"kept", []httpapi.Token{agentA, operator, admin}, true},
		{"removed", []httpapi.Token{operator, admin}, false},
		{"a new secret", []httpapi.Token{{Name: agentA.Name, Secret: "secret-agent-a-renewed-99", Role: httpapi.RoleAgent}, operator, admin}, false},
		{"now an observer", []httpapi.Token{{Name: agentA.Name, Secret: agentA.Secret, Role: httpapi.RoleObserver}, operator, admin}, false},
	} {
		if err := e.api.Reconfigure(c.tokens, nil); err != nil {
			t.Fatal(err)
		}
		if got := still(t.Context()); got != c.want {
			t.Errorf("%s: still holds %v, want %v", c.name, got, c.want)
		}
	}
}

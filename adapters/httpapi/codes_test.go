package httpapi_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
)

// TestTheClientsErrorsMatchTheirCodes: the refusals an agent author
// meets, as the real server makes them, reach the Go client as an
// *Error (errors.As) that errors.Is matches to its code (client.ErrNotFound
// and the rest), with the status that tells apart codes shared by
// several statuses.
func TestTheClientsErrorsMatchTheirCodes(t *testing.T) {
	e := newEnv(t)
	ctx := e.ctx()
	id := e.ask(agentA, "run-codes")
	if _, err := e.as(operator).Answer(ctx, id, client.AnswerRequest{Answer: "yes"}); err != nil {
		t.Fatal(err)
	}
	invalid := clarification("run-codes")
	invalid.Reversibility = ""
	stranger := client.New(e.srv.URL, "not-a-token-0123456789", client.WithHTTPClient(e.srv.Client()))
	for _, c := range []struct {
		name   string
		call   func() error
		code   client.Code
		status int
	}{
		{"an unknown question", func() error { _, err := e.as(agentA).Get(ctx, "aaaaaaaaaaaaaaaaa"); return err }, client.ErrNotFound, http.StatusNotFound},
		{"another agent's question", func() error { _, err := e.as(agentB).Get(ctx, id); return err }, client.ErrNotFound, http.StatusNotFound},
		{"a second answer", func() error {
			_, err := e.as(operator).Answer(ctx, id, client.AnswerRequest{Answer: "no"})
			return err
		}, client.ErrConflict, http.StatusConflict},
		{"an ask that breaks a rule", func() error { _, err := e.as(agentA).Ask(ctx, invalid); return err }, client.ErrInvalid, http.StatusBadRequest},
		{"an unknown token", func() error { _, err := stranger.Get(ctx, id); return err }, client.ErrForbidden, http.StatusUnauthorized},
		{"a role that may not", func() error { _, err := e.as(agentA).List(ctx, "", 0); return err }, client.ErrForbidden, http.StatusForbidden},
		{"a route this server does not serve", func() error { _, err := e.as(agentA).DeclineInHost(ctx, id, "k"); return err }, client.ErrNotFound, http.StatusNotFound},
	} {
		err := c.call()
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != c.status || !errors.Is(err, c.code) {
			t.Errorf("%s: %v, want a %d matching %s", c.name, err, c.status, c.code)
		}
		if errors.Is(err, client.ErrInternal) {
			t.Errorf("%s: %v matches what it is not", c.name, err)
		}
	}
}

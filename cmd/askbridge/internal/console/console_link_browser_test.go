package console

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/httpapi/client"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/app"
	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/browsertest"
)

// TestConsoleLinkFromAnotherSiteKeepsTheSession: a link to a question or
// a filtered inbox, clicked in a chat or a mail client on another site,
// opens it in the session the browser already has, not the sign-in page.
// The other site is "localhost" and the console 127.0.0.1: two sites.
func TestConsoleLinkFromAnotherSiteKeepsTheSession(t *testing.T) {
	m := apptest.Start(t, app.Settings{})
	agent := client.New(m.URL, apptest.AgentA)
	br := apptest.NewChrome(t)
	tab := br.Tab(t, 1280, 900, false)
	signIn(t, tab, m.URL, apptest.OpTok, "ops")
	q := ask(t, agent, client.AskRequest{Kind: core.KindApproval, Question: "Rotate the keys?", Tool: "rotate", Arguments: []byte(`{"keys":"all"}`)})

	links := map[string]string{"question": m.URL + "/q/" + string(q.ID), "inbox": m.URL + "/?kind=approval"}
	chat := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>chat</title><a id="go" href="%s">open it</a>`, html.EscapeString(links[r.URL.Query().Get("to")]))
	}))
	defer chat.Close()
	other := strings.Replace(chat.URL, "127.0.0.1", "localhost", 1)

	for _, to := range []string{"question", "inbox"} {
		t.Run(to, func(t *testing.T) {
			apptest.GoTo(t, tab, other+"/?to="+to)
			if status := browsertest.Submit(t, tab, "#go"); status != http.StatusOK {
				t.Fatalf("the link opened with %d", status)
			}
			if apptest.Eval[bool](t, tab, `document.getElementById("token") !== null`) {
				t.Fatal("the link opened the sign-in page")
			}
			waitCard(t, tab, q.ID, "open")
			waitLive(t, tab)
		})
	}
}

package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// TestArgumentsReadAsWritten: the card, the editor's starting text and
// the recorded outcome show arguments as the agent wrote them, escaped
// once for HTML (&amp;&amp;, &gt;), never as encoding/json's \u0026 and
// \u003e, which a store's copy of them holds.
func TestArgumentsReadAsWritten(t *testing.T) {
	e := newEnv(t, nil)
	q := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Deploy?", Tool: "shell.run",
		Arguments: []byte(`{"cmd":"make test && ./deploy.sh > deploy.log","note":"say \"hi\" to Zoë — 東京 <ops>"}`),
		Editable:  &core.Editable{Keys: []string{"cmd"}}})
	b := e.signedIn(opAlice)

	cmd := `&#34;cmd&#34;: &#34;make test &amp;&amp; ./deploy.sh &gt; deploy.log&#34;`
	note := `&#34;note&#34;: &#34;say \&#34;hi\&#34; to Zoë — 東京 &lt;ops&gt;&#34;`
	page := b.get("/q/" + string(q.ID)).body
	for _, where := range []struct{ name, start, end string }{
		{"the card", `<pre class="args">`, `</pre>`},
		{"the editor", `name="arguments"`, `</textarea>`},
	} {
		i := strings.Index(page, where.start)
		if i < 0 {
			t.Fatalf("the page has no %s:\n%s", where.name, page)
		}
		shown := page[i:]
		shown = shown[:strings.Index(shown, where.end)]
		if !strings.Contains(shown, cmd) || !strings.Contains(shown, note) {
			t.Errorf("%s shows\n%s\nwant it to hold\n%s\n%s", where.name, shown, cmd, note)
		}
	}
	for _, bad := range []string{`\u0026`, `\u003c`, `\u003e`, `&amp;amp;`, `&amp;gt;`} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}

	edited := `{"cmd":"make test && ./deploy.sh > deploy.log 2>&1","note":"say \"hi\" to Zoë — 東京 <ops>"}`
	r := b.post("/q/"+string(q.ID)+"/answer", url.Values{"option": {"approve"}, "arguments": {edited}})
	if r.status != http.StatusOK {
		t.Fatalf("edit and approve: %d\n%s", r.status, r.body)
	}
	i := strings.Index(r.body, "<dt>Approved arguments</dt>")
	if i < 0 {
		t.Fatalf("the outcome does not show the approved arguments:\n%s", r.body)
	}
	recorded := r.body[i:]
	recorded = recorded[:strings.Index(recorded, "</dd>")]
	if want := `&#34;cmd&#34;: &#34;make test &amp;&amp; ./deploy.sh &gt; deploy.log 2&gt;&amp;1&#34;`; !strings.Contains(recorded, want) || strings.Contains(recorded, `\u00`) {
		t.Errorf("the approved arguments read\n%s\nwant them to hold\n%s", recorded, want)
	}
	card := b.get("/rows/" + string(q.ID)).body
	if !strings.Contains(card, `2&gt;&amp;1`) || strings.Contains(card, `\u00`) {
		t.Errorf("the closed card does not show the approved arguments as written:\n%s", card)
	}
}

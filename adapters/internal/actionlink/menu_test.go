package actionlink_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

var href = regexp.MustCompile(`<a href="([^"]+)">([^<]+)</a>`)

// TestMenuLinksBehindAPathPrefix: the "More choices" menu's links work
// when the public URL has a path of its own that a proxy strips
// (https://corp/askbridge/…): each resolves, against the menu's own
// address, to a page that confirms its choice. Before, they were signed
// under the page's mount path ("/ntfy/act/…"), which leaves the public
// path out, so every one of them went to a page that is not there.
func TestMenuLinksBehindAPathPrefix(t *testing.T) {
	b := newBridge(t)
	proxy := http.NewServeMux()
	proxy.Handle("/askbridge/", http.StripPrefix("/askbridge", b.srv.Config.Handler))
	public := httptest.NewServer(proxy)
	t.Cleanup(public.Close)

	q := b.ask(approval())
	const topic = aliceTopic
	shown := card.New(q, core.MessageRef{Surface: core.SurfaceNtfy, Room: topic, Kind: core.DeliverPost})
	menu, err := b.s.MenuLink(q, shown, core.SurfaceNtfy, topic, public.URL+"/askbridge/ntfy/act/")
	if err != nil {
		t.Fatal(err)
	}
	status, body := call(t, http.MethodGet, menu, nil)
	links := href.FindAllStringSubmatch(body, -1)
	if status != http.StatusOK || len(links) == 0 {
		t.Fatalf("the menu: %d\n%s", status, body)
	}
	base, _ := url.Parse(menu)
	for _, l := range links {
		rel, err := url.Parse(strings.ReplaceAll(l[1], "&amp;", "&"))
		if err != nil {
			t.Fatal(err)
		}
		u := base.ResolveReference(rel).String()
		res, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(page), "Confirm: "+l[2]) {
			t.Errorf("%q goes to %s: %d\n%s", l[2], u, res.StatusCode, page)
		}
	}
	if got := b.state(q.ID); !got.Open() {
		t.Fatalf("opening the links answered the question: %s", got.State)
	}
}

// TestMenuSaysWhereAnAnswerIsTyped: a clarification's menu offers to open
// the page where the answer is typed, not a "Reply" that nothing reads.
func TestMenuSaysWhereAnAnswerIsTyped(t *testing.T) {
	b := newBridge(t)
	q := b.ask(core.AskInput{Kind: core.KindClarification, Text: "Which region?"})
	const topic = aliceTopic
	shown := card.New(q, core.MessageRef{Surface: core.SurfaceNtfy, Room: topic, Kind: core.DeliverPost})
	menu, err := b.s.MenuLink(q, shown, core.SurfaceNtfy, topic, b.srv.URL+"/ntfy/act/")
	if err != nil {
		t.Fatal(err)
	}
	status, body := call(t, http.MethodGet, menu, nil)
	var labels []string
	for _, l := range href.FindAllStringSubmatch(body, -1) {
		labels = append(labels, l[2])
	}
	if status != http.StatusOK || !slices.Contains(labels, card.LabelAnswerOnPage) || slices.Contains(labels, card.LabelAnswer) {
		t.Fatalf("the menu: %d, links %q", status, labels)
	}
}

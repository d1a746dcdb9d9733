package console_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/browsertest"
	"github.com/askbridge/askbridge/store/bolt"
)

// steppedLog is the env's store with two ways to step in between the
// console and it: the log read only up to, not including, the first
// event hold picks (as a stream's poll that fell between two transitions
// sees it), and during, run once at the start of the next listing of open
// questions (as a transition that lands just as a page is listed).
type steppedLog struct {
	*bolt.Store
	mu     sync.Mutex
	hold   func(core.Event) bool
	during func() error
	failed error // what during returned
}

func (s *steppedLog) Events(ctx context.Context, since int64, limit int) ([]core.Event, error) {
	evs, err := s.Store.Events(ctx, since, limit)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, e := range evs {
		if s.hold != nil && s.hold(e) {
			return evs[:i], err
		}
	}
	return evs, err
}

func (s *steppedLog) OpenPage(ctx context.Context, f core.OpenFilter, cursor string, limit int) (core.OpenPage, error) {
	s.mu.Lock()
	during := s.during
	s.during = nil
	s.mu.Unlock()
	if during != nil {
		err := during()
		s.mu.Lock()
		s.failed = err
		s.mu.Unlock()
	}
	return s.Store.OpenPage(ctx, f, cursor, limit)
}

func (s *steppedLog) holding(hold func(core.Event) bool) {
	s.mu.Lock()
	s.hold = hold
	s.mu.Unlock()
}

// listing has the next listing run f first; done is what it returned,
// once it has run.
func (s *steppedLog) listing(f func() error) (done func() error) {
	s.mu.Lock()
	s.during = f
	s.mu.Unlock()
	return func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.during != nil {
			return errors.New("no listing ran it")
		}
		return s.failed
	}
}

// newSteppedEnv is newEnv over a steppedLog.
func newSteppedEnv(t *testing.T, routes map[string]core.Route) (*env, *steppedLog) {
	var log *steppedLog
	e := newWrappedEnv(t, routes, func(st *bolt.Store) core.Store {
		log = &steppedLog{Store: st}
		return log
	})
	return e, log
}

// readsNoted has every page the tab opens note, in window.readRows, each
// row it fetched once it has done with what came back: a task after
// the body was read, so after the promise callbacks that the body set
// off. A test waits on it for a fetch whose outcome changes nothing.
var readsNoted chromedp.Action[chromedp.Void] = func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
	_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `(function () {
		var text = Response.prototype.text;
		window.readRows = [];
		Response.prototype.text = function () {
			var path = new URL(this.url).pathname;
			return text.call(this).then(function (body) {
				window.setTimeout(function () { window.readRows.push(path); }, 0);
				return body;
			});
		};
	})()`})
	return chromedp.Void{}, err
}

// readsOf is a condition: the page has done with n fetches of q's row.
func readsOf(q *core.Question, n int) string {
	return fmt.Sprintf(`window.readRows.filter(function (p) { return p === "/rows/%s"; }).length === %d`, q.ID, n)
}

// TestAQuestionClosedAtItsAskLowersNoCount: a page is open while a
// policy rule decides a question as it is asked. The page hears of the
// ask, fetches the row, finds it closed and leaves it out; the close is
// told only after. Before, that close lowered the open count once more,
// for a question it had never counted: one open question read as none.
func TestAQuestionClosedAtItsAskLowersNoCount(t *testing.T) {
	e, log := newSteppedEnv(t, map[string]core.Route{core.DefaultRoute: {
		Deciders: map[core.Surface][]string{core.SurfaceConsole: {"*"}, core.SurfaceAPI: {"*"}},
		Rules:    []core.Rule{{Name: "reads", When: `tool == "read_file"`, Decide: core.DecideAllow}},
	}})
	e.ask(core.AskInput{Text: "Which bucket for the logs?"})
	tab := chrome(t)
	browsertest.Do(t, tab, readsNoted, chromedp.Navigate(e.srv.URL+"/"))
	signInTab(t, tab, opAlice)
	browsertest.Until(t, tab, openCount(1))

	log.holding(func(ev core.Event) bool { return ev.Kind == core.EventAnswered })
	ruled := e.ask(core.AskInput{Kind: core.KindApproval, Text: "Read it?", Tool: "read_file", Arguments: []byte(`{"path":"/tmp/a"}`)})
	if !core.DecidedAtAsk(ruled) {
		t.Fatalf("the rule left the question %s", ruled.State)
	}
	browsertest.Until(t, tab, readsOf(ruled, 1)+` && document.getElementById("card-`+string(ruled.ID)+`") === null`)
	log.holding(nil)
	browsertest.Until(t, tab, readsOf(ruled, 2))
	if got := browsertest.Eval[string](t, tab, `document.getElementById("open-count").textContent`); got != "1" {
		t.Fatalf("with one question open, the page counts %s open", got)
	}
}

// TestAnAskAsThePageIsListedCountsOnce: a question is asked in the
// moment between the console reading where the log ends and listing the
// open questions. The listing counts it; the page, on the list's first
// page, does not show it, as it lands on the next. Before, the page's
// stream also told of its ask, and the page counted it again: 51 open
// questions read as 52, one of them "new on another page".
func TestAnAskAsThePageIsListedCountsOnce(t *testing.T) {
	e, log := newSteppedEnv(t, nil)
	e.seedPages(50)
	asked := log.listing(func() error {
		_, err := e.svc.Ask(t.Context(), core.AskInput{Agent: "agent-a", RunID: "run-1", Kind: core.KindClarification,
			Reversibility: core.Reversible, Text: "Asked as the page was listed?"})
		return err
	})
	tab := chrome(t)
	browsertest.Do(t, tab, chromedp.Navigate(e.srv.URL+"/"))
	signInTab(t, tab, opAlice)
	// The stream has told all it had (signInTab waits for it), and every
	// row it sent the page to fetch is fetched once no stub is left.
	browsertest.Until(t, tab, `document.querySelector("#inbox > .stub") === null`)
	if err := asked(); err != nil {
		t.Fatal(err)
	}
	if !browsertest.Eval[bool](t, tab, openCount(51)+` && document.getElementById("elsewhere").hidden`) {
		t.Fatalf("with 51 open, the page says %q open and %q", browsertest.Eval[string](t, tab, `document.getElementById("open-count").textContent`),
			browsertest.Eval[string](t, tab, `document.getElementById("elsewhere").hidden ? "" : document.getElementById("elsewhere").textContent`))
	}
}

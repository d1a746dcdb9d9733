package console_test

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/core"
)

var (
	historySeq  = regexp.MustCompile(`<td data-label="#">(\d+)</td>`)
	historyNext = regexp.MustCompile(`<a href="([^"]+)" rel="next"`)
	historySrc  = regexp.MustCompile(`data-src="(/q/[^"]+/part[^"]*)"`)
)

// seedEvents appends n refused events of q through the store, each
// followed by every events of other (noise between them in the log), and
// returns the seqs of q's events in the log, oldest first.
func seedEvents(t *testing.T, e *env, q *core.Question, n, every int, other *core.Question) []int64 {
	t.Helper()
	var seqs []int64
	for i := range n {
		ev, err := e.store.Append(t.Context(), core.Event{QuestionID: q.ID, RunID: q.RunID, At: e.clock.Now(),
			Kind: core.EventRefused, Surface: core.SurfaceConsole, Reason: fmt.Sprintf("late answer %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, ev.Seq)
		for range every {
			noise(t, e, other)
		}
	}
	return seqs
}

func noise(t *testing.T, e *env, other *core.Question) {
	t.Helper()
	if _, err := e.store.Append(t.Context(), core.Event{QuestionID: other.ID, RunID: other.RunID, At: e.clock.Now(),
		Kind: core.EventRefused, Surface: core.SurfaceConsole, Reason: "elsewhere"}); err != nil {
		t.Fatal(err)
	}
}

// historyOf follows a question's page and its "Later events" links as a
// person without script would, and returns every event seq shown, in
// page order, and each page's body.
func historyOf(t *testing.T, b *browser, id core.QuestionID) ([]int64, []string) {
	t.Helper()
	var seqs []int64
	var pages []string
	for link := "/q/" + string(id); link != ""; {
		if len(pages) == 50 {
			t.Fatalf("still paging after %d pages", len(pages))
		}
		r := b.get(link)
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d\n%s", link, r.status, r.body)
		}
		pages = append(pages, r.body)
		for _, m := range historySeq.FindAllStringSubmatch(r.body, -1) {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			seqs = append(seqs, n)
		}
		link = ""
		if m := historyNext.FindStringSubmatch(r.body); m != nil {
			link = html.UnescapeString(m[1])
		}
	}
	return seqs, pages
}

// questionSeqs is every event seq of q in the log, oldest first.
func questionSeqs(t *testing.T, e *env, id core.QuestionID) []int64 {
	t.Helper()
	var out []int64
	for since := int64(0); ; {
		evs, err := e.svc.Events(t.Context(), since, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.QuestionID == id {
				out = append(out, ev.Seq)
			}
		}
		if len(evs) < 1000 {
			return out
		}
		since = evs[len(evs)-1].Seq
	}
}

// TestQuestionPageReachesTheNewestOfALongHistory: a question refused
// 1,200 times has more events than one read of its history returns. Its
// page shows the oldest, says that more follow, and links to them; every
// event, the newest included, is reachable by plain links, once each, in
// order, and the last page says how many there are in all.
func TestQuestionPageReachesTheNewestOfALongHistory(t *testing.T) {
	e := newSimEnv(t, nil)
	q := e.ask(core.AskInput{Text: "Rotate the keys?"})
	other := e.ask(core.AskInput{Text: "Something else"})
	seeded := seedEvents(t, e, q, 1200, 1, other)
	want := questionSeqs(t, e, q.ID)
	if len(want) != 1201 || want[len(want)-1] != seeded[len(seeded)-1] {
		t.Fatalf("the log holds %d events of the question", len(want))
	}
	b := e.signedIn(opAlice)

	got, pages := historyOf(t, b, q.ID)
	if !slices.Equal(got, want) {
		t.Fatalf("the pages show %d events (first %v, last %v); want all %d, the newest %d",
			len(got), got[:min(3, len(got))], got[max(0, len(got)-3):], len(want), want[len(want)-1])
	}
	if len(pages) < 2 {
		t.Fatalf("%d pages", len(pages))
	}
	if first := pages[0]; !strings.Contains(first, "Events 1 to ") || !strings.Contains(first, "or more") {
		t.Fatalf("the first page does not say that more follow:\n%s", first)
	}
	last := pages[len(pages)-1]
	if !strings.Contains(last, "of 1201.") || strings.Contains(last, "or more") || !strings.Contains(last, `href="/q/`+string(q.ID)+`" class="first"`) {
		t.Fatalf("the last page does not say how many there are in all:\n%s", last)
	}

	// The last page's part, as the page fetches it on a change, is that
	// same page again (the newest event and all), not the first one.
	src := historySrc.FindStringSubmatch(last)
	if src == nil || !strings.Contains(src[1], "after=") {
		t.Fatalf("the last page's part is fetched from %v", src)
	}
	part := b.get(html.UnescapeString(src[1]))
	if part.status != http.StatusOK || !strings.Contains(part.body, `<td data-label="#">`+strconv.FormatInt(want[len(want)-1], 10)+`</td>`) ||
		strings.Contains(part.body, `<td data-label="#">`+strconv.FormatInt(want[0], 10)+`</td>`) {
		t.Fatalf("the last page's part: %d\n%s", part.status, part.body)
	}

	for _, bad := range []string{"?after=x&n=2", "?after=5", "?after=-1&n=2", "?after=5&n=0"} {
		if r := b.get("/q/" + string(q.ID) + bad); r.status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, r.status)
		}
	}
}

// TestQuestionPageSearchesOnPastALongStretchOfOtherEvents: when a page's
// read of the log stops at its bound before finding the question's next
// event, the page says how far it searched and links on from there, so
// the newest event is still reached, a bounded read at a time.
func TestQuestionPageSearchesOnPastALongStretchOfOtherEvents(t *testing.T) {
	t.Cleanup(console.SetHistoryScan(1))
	e := newSimEnv(t, nil)
	q := e.ask(core.AskInput{Text: "Rotate the keys?"})
	other := e.ask(core.AskInput{Text: "Something else"})
	seedEvents(t, e, q, 999, 0, other)
	for range 2500 {
		noise(t, e, other)
	}
	seedEvents(t, e, q, 1, 0, other)
	want := questionSeqs(t, e, q.ID)
	b := e.signedIn(opAlice)

	got, pages := historyOf(t, b, q.ID)
	if !slices.Equal(got, want) {
		t.Fatalf("the pages show %d events (last %v); want all %d, the newest %d", len(got), got[max(0, len(got)-3):], len(want), want[len(want)-1])
	}
	searched := 0
	for _, p := range pages[:len(pages)-1] {
		if strings.Contains(p, "searched the log to") {
			searched++
		}
	}
	if searched == 0 || !strings.Contains(pages[len(pages)-1], "of 1001.") {
		t.Fatalf("%d of %d pages say how far they searched; the last:\n%s", searched, len(pages), pages[len(pages)-1])
	}
}

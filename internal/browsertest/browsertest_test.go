package browsertest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
)

// pages serves a page with only what axe rates moderate (no <h1>, no
// landmarks), one with critical violations too (an image without alt
// text, a button without a name), and one that moves on by itself to a
// page that only later says it is ready.
func pages(t *testing.T) *httptest.Server {
	t.Helper()
	html := map[string]string{
		"/moderate": `<!doctype html><html lang="en"><title>moderate</title><p>Nothing here is a heading.</p></html>`,
		"/critical": `<!doctype html><html lang="en"><title>critical</title><main><h1>critical</h1>` +
			`<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><button></button></main></html>`,
		"/moving": `<!doctype html><html lang="en"><title>moving</title><script>setTimeout(function () { location.href = "/moved"; }, 100);</script></html>`,
		"/moved": `<!doctype html><html lang="en"><title>moved</title>` +
			`<script>setTimeout(function () { document.documentElement.setAttribute("data-ready", "yes"); }, 100);</script></html>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok := html[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestViolationsKeepsTheSeriousAndCritical: the check fails a page for
// what axe rates serious or critical, and only for that; the moderate
// page does have violations, so its passing is the filter's doing.
func TestViolationsKeepsTheSeriousAndCritical(t *testing.T) {
	srv := pages(t)
	tab := Start(t)

	Do(t, tab, chromedp.Navigate(srv.URL+"/moderate"))
	if found := Violations(t, tab, "moderate"); len(found) != 0 {
		t.Errorf("a page with only moderate violations fails the check: %+v", found)
	}
	all, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`axe.run(document).then(function (r) { return r.violations.map(function (v) { return v.id + " " + v.impact; }); })`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(all, "page-has-heading-one moderate") {
		t.Fatalf("axe finds %v on the moderate page, want page-has-heading-one among them", all)
	}

	Do(t, tab, chromedp.Navigate(srv.URL+"/critical"))
	var ids []string
	for _, v := range Violations(t, tab, "critical") {
		ids = append(ids, v.ID)
		if len(v.Nodes) == 0 {
			t.Errorf("%s names no element", v.ID)
		}
	}
	for _, want := range []string{"image-alt", "button-name"} {
		if !slices.Contains(ids, want) {
			t.Errorf("the critical page's violations are %v, want %s among them", ids, want)
		}
	}
}

// TestUntilOutlivesANavigation: a condition that comes to hold only on
// the page the tab navigates to while Until polls is still seen.
func TestUntilOutlivesANavigation(t *testing.T) {
	srv := pages(t)
	tab := Start(t)
	Do(t, tab, chromedp.Navigate(srv.URL+"/moving"))
	Until(t, tab, `location.pathname === "/moved" && document.documentElement.getAttribute("data-ready") === "yes"`)
	if got := Eval[string](t, tab, `document.title`); got != "moved" {
		t.Errorf("title %q after the wait, want moved", got)
	}
}

package console

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/chromedp/chromedp"
)

// axe-core checks the console's pages as a screen reader and a reader with
// low vision meet them. scripts/test installs it from the npm registry
// into the user's cache (never into this repository); axeEnv points at
// another copy of axe.min.js.
const axeEnv = "ASKBRIDGE_AXE"

// axePath is where axe-core's script is looked for: $ASKBRIDGE_AXE, or
// where scripts/test's npm install --prefix puts it.
func axePath() string {
	if p := os.Getenv(axeEnv); p != "" {
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "askbridge", "axe", "node_modules", "axe-core", "axe.min.js")
}

var axeSource = sync.OnceValues(func() (string, error) {
	src, err := os.ReadFile(axePath())
	return string(src), err
})

// loadAxe returns axe-core's source, or fails the test at once, saying
// how to install it: an accessibility test that quietly skipped would
// prove nothing.
func loadAxe(t *testing.T) string {
	t.Helper()
	src, err := axeSource()
	if err != nil {
		t.Fatalf("axe-core is missing (%v): run scripts/test, which installs it with npm, or set %s to its axe.min.js", err, axeEnv)
	}
	return src
}

// axeViolation is what a failure report needs of one of axe's results.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// axeRun runs axe over the whole document and keeps the serious and
// critical violations, each with the first few elements it names.
const axeRun = `axe.run(document, {resultTypes: ["violations"]}).then(function (r) {
  return r.violations.filter(function (v) { return v.impact === "serious" || v.impact === "critical"; }).map(function (v) {
    return {id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map(function (n) {
      return n.target.join(" ") + ": " + (n.failureSummary || "").replace(/\s+/g, " ");
    })};
  });
})`

// audit fails the test for every serious or critical axe-core violation on
// the tab's page, and for a page without exactly one <h1> or with a table
// header that says nothing (axe rates those two below serious, but a
// screen reader's reader navigates by them). axe's source is evaluated
// through the DevTools protocol: the page's CSP rightly refuses an
// injected script element.
func audit(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	src := loadAxe(t)
	c, cancel := context.WithTimeout(ctx, apptest.WaitBound)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Evaluate[chromedp.Void](src)); err != nil {
		t.Fatalf("%s: loading axe-core: %v", page, err)
	}
	found, err := chromedp.Run(c, chromedp.Evaluate[[]axeViolation](axeRun, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: axe.run: %v", page, err)
	}
	for _, v := range found {
		t.Errorf("%s: %s (%s): %s\n  %s", page, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n  "))
	}
	if n := apptest.Eval[int](t, ctx, `document.querySelectorAll("h1").length`); n != 1 {
		t.Errorf("%s has %d <h1>, want exactly one", page, n)
	}
	if empty := apptest.Eval[[]string](t, ctx, `Array.from(document.querySelectorAll("th")).filter(function (th) { return th.textContent.trim() === ""; }).map(function (th) { return th.closest("table").className + " column " + (th.cellIndex + 1); })`); len(empty) > 0 {
		t.Errorf("%s has empty table headers: %v", page, empty)
	}
}

// fitsWidth fails the test when the tab's page is wider than width. A
// phone widens its layout viewport to fit what overflows, so the
// viewport's own width is checked too.
func fitsWidth(t *testing.T, ctx context.Context, page string, width int) {
	t.Helper()
	sw, iw := apptest.Eval[int](t, ctx, `document.documentElement.scrollWidth`), apptest.Eval[int](t, ctx, `window.innerWidth`)
	if sw <= width && iw == width {
		return
	}
	t.Log(apptest.Eval[string](t, ctx, fmt.Sprintf(`Array.from(document.querySelectorAll("body *")).filter(function(e){ return e.getBoundingClientRect().right > %d; }).slice(0, 12).map(function(e){ return e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right); }).join("\n")`, width+1)))
	t.Errorf("%s does not fit a %dpx screen: it is %dpx wide, in a viewport of %dpx", page, width, sw, iw)
}

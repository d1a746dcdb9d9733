package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeEnv names a copy of axe-core's axe.min.js to use instead of the one
// scripts/test installs from the npm registry into the user's cache
// (never into this repository).
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

// axeSource is read once per test binary: every audited page loads the
// same script, over half a megabyte of it.
var axeSource = sync.OnceValues(func() (string, error) {
	src, err := os.ReadFile(axePath())
	return string(src), err
})

// Violation is what a failure report needs of one of axe's results: the
// rule, how bad axe rates it, what it asks for, and the first few
// elements it names, each with axe's summary of what is wrong there.
type Violation struct {
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

// LoadAxe returns axe-core's source, or fails t at once, saying how to
// install it: an accessibility check that quietly skipped would prove
// nothing. A test that audits pages later calls it first, so a missing
// axe-core fails it before the setup rather than after.
func LoadAxe(t *testing.T) string {
	t.Helper()
	src, err := axeSource()
	if err != nil {
		t.Fatalf("axe-core is missing (%v): run scripts/test, which installs it with npm, or set %s to its axe.min.js", err, axeEnv)
	}
	return src
}

// Violations runs axe-core over the tab's page as a screen reader and a
// reader with low vision meet it, and returns its serious and critical
// violations: the ones that keep someone from using the page. axe's
// source is evaluated through the DevTools protocol, since a page's CSP
// rightly refuses an injected script element.
func Violations(t *testing.T, tab context.Context, page string) []Violation {
	t.Helper()
	src := LoadAxe(t)
	c, cancel := context.WithTimeout(tab, WaitBound)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Evaluate[chromedp.Void](src)); err != nil {
		t.Fatalf("%s: loading axe-core: %v", page, err)
	}
	found, err := chromedp.Run(c, chromedp.Evaluate[[]Violation](axeRun, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: axe.run: %v", page, err)
	}
	return found
}

// Axe fails t for every serious or critical axe-core violation on the
// tab's page, naming the page and where on it each one is.
func Axe(t *testing.T, tab context.Context, page string) {
	t.Helper()
	for _, v := range Violations(t, tab, page) {
		t.Errorf("%s: %s (%s): %s\n  %s", page, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n  "))
	}
}

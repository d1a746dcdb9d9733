package console_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The console's own browser tests drive Debian's headless chromium (as
// the program's do, in cmd/askbridge/internal/console) against the
// console alone on an httptest server, so a test can run the session's
// clock forward. scripts/test installs chromium and axe-core.

// waitBound bounds every wait on a page; waits end as soon as their
// condition holds.
const waitBound = 60 * time.Second

// chrome starts chromium for t and returns a fresh tab in a browser
// context of its own (its own cookies and storage); more tabs of the same
// browser come from tabOf.
func chrome(t *testing.T) context.Context {
	t.Helper()
	const path = "/usr/bin/chromium"
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("chromium is not installed (apt-get install -y chromium; scripts/test does it): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	// The first action starts the browser and opens the tab, which lives
	// as long as the context given to it: so not one with a timeout.
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return tab
}

func do(t *testing.T, tab context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(tab, waitBound)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatal(err)
	}
}

func eval[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(tab, waitBound)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// until waits for a JavaScript condition to hold on the tab's page, as
// it is now or after the page navigates (a poll in a page that navigates
// away ends, and is made again in the new one).
func until(t *testing.T, tab context.Context, cond string) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		c, cancel := context.WithDeadline(tab, deadline)
		_, err := chromedp.Run(c, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond),
			chromedp.WithPollingTimeout(time.Until(deadline))))
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || tab.Err() != nil {
			body, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			t.Fatalf("waiting for %s: %v\npage:\n%s", cond, err, body)
		}
	}
}

// click clicks sel and returns the status of the page it led to.
func click(t *testing.T, tab context.Context, sel string) int64 {
	t.Helper()
	c, cancel := context.WithTimeout(tab, waitBound)
	defer cancel()
	resp, err := chromedp.RunResponse(c, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
	return resp.Status
}

// signInTab signs the tab in with tok on the sign-in form it shows, and
// waits for the page it leads to, live.
func signInTab(t *testing.T, tab context.Context, tok testToken) {
	t.Helper()
	until(t, tab, `document.getElementById("signin") !== null`)
	do(t, tab, chromedp.SendKeys(chromedp.ID("token"), tok.secret))
	if status := click(t, tab, "#signin button"); status != http.StatusOK {
		t.Fatalf("sign in as %s: %d", tok.name, status)
	}
	until(t, tab, fmt.Sprintf(`document.querySelector(".top .who") !== null && document.querySelector(".top .who").firstChild.textContent.trim() === %q && document.body.getAttribute("data-live") === "yes"`, tok.name))
}

// axeRun runs axe-core over the page and keeps its serious and critical
// violations.
const axeRun = `axe.run(document, {resultTypes: ["violations"]}).then(function (r) {
  return r.violations.filter(function (v) { return v.impact === "serious" || v.impact === "critical"; }).map(function (v) {
    return v.id + ": " + v.help + " at " + v.nodes.slice(0, 3).map(function (n) { return n.target.join(" "); }).join(", ");
  });
})`

// audit fails t for every serious or critical axe-core violation on the
// tab's page. axe-core comes from $ASKBRIDGE_AXE or where scripts/test
// installs it; missing, the test fails rather than skip the check.
// Its source is evaluated through DevTools: the console's CSP rightly
// refuses an injected script element.
func audit(t *testing.T, tab context.Context, page string) {
	t.Helper()
	path := os.Getenv("ASKBRIDGE_AXE")
	if path == "" {
		cache, _ := os.UserCacheDir()
		path = filepath.Join(cache, "askbridge", "axe", "node_modules", "axe-core", "axe.min.js")
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("axe-core is missing (%v): run scripts/test, or set ASKBRIDGE_AXE to its axe.min.js", err)
	}
	c, cancel := context.WithTimeout(tab, waitBound)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Evaluate[chromedp.Void](string(src))); err != nil {
		t.Fatalf("%s: loading axe-core: %v", page, err)
	}
	found, err := chromedp.Run(c, chromedp.Evaluate[[]string](axeRun, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: axe.run: %v", page, err)
	}
	if len(found) > 0 {
		t.Errorf("%s:\n  %s", page, strings.Join(found, "\n  "))
	}
}

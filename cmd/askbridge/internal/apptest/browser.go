package apptest

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/internal/browsertest"
)

// The browser tests drive Debian's chromium, headless, against the real
// program, through internal/browsertest, which the console's own browser
// tests share; what is here is what only the program's tests need.

// UpdateShots is -update: the screenshot tests keep what they took
// instead of comparing with what was kept.
var UpdateShots = flag.Bool("update", false, "rewrite the screenshots in adapters/console/testdata/screenshots/, adapters/slack/testdata/screenshots/ and adapters/teams/testdata/screenshots/")

// WaitBound bounds every wait on a page condition; waits end as soon as
// the condition holds.
const WaitBound = browsertest.WaitBound

// Chrome is one headless chromium; each tab gets its own browser
// context, so its own cookies, as a second person's browser would.
type Chrome struct {
	alloc context.Context
}

// NewChrome starts chromium for t and stops it when t ends. The
// program's tests have always run it with QUIC off as well (the console's
// own never did), so that flag is theirs, not browsertest's.
func NewChrome(t *testing.T) *Chrome {
	t.Helper()
	return &Chrome{alloc: browsertest.Start(t, chromedp.Flag("disable-quic", true))}
}

// Tab opens a page in a fresh browser context at the given size.
func (c *Chrome) Tab(t *testing.T, width, height int64, mobile bool) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(c.alloc, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(2))
	}
	// The first action opens the tab, and it lives as long as the context
	// given to that action: so not one with a timeout.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height, opts...)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// Do, Eval and Until are browsertest's, under the names the program's
// tests have always called them by.

// Do runs steps in the tab within WaitBound.
func Do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	browsertest.Do(t, ctx, steps...)
}

// Eval evaluates expr in the tab's page within WaitBound.
func Eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	return browsertest.Eval[T](t, ctx, expr)
}

// Until waits for a JavaScript condition to hold on the page, across
// navigations, within WaitBound.
func Until(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	browsertest.Until(t, ctx, cond)
}

// Click clicks the element sel finds, within WaitBound, and makes sure
// the click landed on it. chromedp clicks at the point where the element
// was when it measured it; the live inbox draws rows anew as their
// questions' events arrive, so the node may be gone by then ("Could not
// find node with given id") or the rows above it may have grown, leaving
// another element under that point. The page notes where the click
// landed (armClick), and a click that landed elsewhere is tried again.
func Click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	deadline := time.Now().Add(WaitBound)
	for {
		c, cancel := context.WithDeadline(ctx, deadline)
		err := chromedp.Do(c, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(armClick, sel)), chromedp.Click(chromedp.CSS(sel)))
		var landed string
		if err == nil {
			// An error here is a page that navigated on the click: it
			// landed, and the page that noted it is gone.
			landed, _ = chromedp.Run(c, chromedp.Evaluate[string](clickLanded))
		}
		cancel()
		switch {
		case err == nil && landed != "elsewhere":
			return
		case time.Now().After(deadline):
			t.Fatalf("clicking %s: %v (landed %q)", sel, err, landed)
		case err == nil:
			t.Logf("the click on %s landed elsewhere as the page moved; clicking again", sel)
		case !strings.Contains(err.Error(), "Could not find node with given id"):
			t.Fatalf("clicking %s: %v", sel, err)
		}
	}
}

// armClick has the page note whether its next click lands inside the
// element the selector %q finds when the click arrives (a fresh copy of
// the row counts as the row).
const armClick = `(function (sel) {
  if (window.__clickWatch) { document.removeEventListener("click", window.__clickWatch, true); }
  window.__clickLanded = "nowhere";
  window.__clickWatch = function (e) {
    document.removeEventListener("click", window.__clickWatch, true);
    var el = document.querySelector(sel);
    window.__clickLanded = el !== null && el.contains(e.target) ? "there" : "elsewhere";
  };
  document.addEventListener("click", window.__clickWatch, true);
  return true;
})(%q)`

// clickLanded is where the click armClick watched for landed: "there",
// "elsewhere", "nowhere" (no click event: the element under the point
// went away between press and release), or "" on a page that navigated.
const clickLanded = `(function () {
  var at = window.__clickLanded || "";
  return at === "nowhere" ? "elsewhere" : at;
})()`

func GoTo(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	Do(t, ctx, chromedp.Navigate(url))
}

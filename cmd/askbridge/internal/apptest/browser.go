package apptest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser tests drive Debian's chromium, headless, against the real
// program. scripts/test (which .ci/run calls) installs chromium when it is missing.

// UpdateShots is -update: the screenshot tests keep what they took
// instead of comparing with what was kept.
var UpdateShots = flag.Bool("update", false, "rewrite the screenshots in adapters/console/testdata/screenshots/, adapters/slack/testdata/screenshots/ and adapters/teams/testdata/screenshots/")

// WaitBound bounds every wait on a page condition; waits end as soon as
// the condition holds.
const WaitBound = 60 * time.Second

// Chrome is one headless chromium; each tab gets its own browser
// context, so its own cookies, as a second person's browser would.
type Chrome struct {
	alloc context.Context
}

// NewChrome starts chromium for t and stops it when t ends.
func NewChrome(t *testing.T) *Chrome {
	t.Helper()
	path := "/usr/bin/chromium"
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("chromium is not installed (apt-get install -y chromium; scripts/test does it): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
	)
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	// Start the browser itself now, so tabs share it.
	root, cancelRoot := chromedp.NewContext(alloc)
	t.Cleanup(cancelRoot)
	if err := chromedp.Do(root, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &Chrome{alloc: root}
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

func Do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, WaitBound)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatal(err)
	}
}

func Eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// Until waits for a JavaScript condition to hold on the page.
func Until(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	deadline := time.Now().Add(WaitBound)
	for {
		c, cancel := context.WithDeadline(ctx, deadline)
		_, err := chromedp.Run(c, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond),
			chromedp.WithPollingTimeout(time.Until(deadline))))
		cancel()
		if err == nil {
			return
		}
		// A navigation while polling ends the page the poll ran in ("cannot
		// find context", "target navigated"); poll again in the new one.
		if time.Now().After(deadline) || ctx.Err() != nil {
			body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			t.Fatalf("waiting for %s: %v\npage:\n%s", cond, err, body)
		}
	}
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

package apptest

import (
	"context"
	"flag"
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

// Click clicks the element sel finds, finding it again when the node it
// found was replaced before the click landed (the live inbox renders a
// row anew as its question's events arrive, "Could not find node with
// given id"), within WaitBound.
func Click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	deadline := time.Now().Add(WaitBound)
	for {
		c, cancel := context.WithDeadline(ctx, deadline)
		err := chromedp.Do(c, chromedp.Click(chromedp.CSS(sel)))
		cancel()
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "Could not find node with given id") || time.Now().After(deadline) {
			t.Fatalf("clicking %s: %v", sel, err)
		}
	}
}

func GoTo(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	Do(t, ctx, chromedp.Navigate(url))
}

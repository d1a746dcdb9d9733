// Package browsertest is the headless chromium that browser tests drive,
// shared by the console's own tests (adapters/console) and the program's
// (cmd/askbridge/internal/apptest), which cannot import each other: one
// way to start the browser, one bound on every wait, one axe-core check.
// What only one of them needs (the program's tabs at a size and scale,
// its clicks that check where they landed, the console's sign-in) stays
// with it. Only test binaries import it.
//
// It drives Debian's chromium at /usr/bin/chromium; scripts/test installs
// it when it is missing. A missing browser fails the test, never skips
// it: CI must not pass by running nothing.
package browsertest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// WaitBound bounds every wait on a page; waits end as soon as their
// condition holds, so the bound only decides how long a broken page takes
// to fail.
const WaitBound = 60 * time.Second

// chromiumPath is Debian's chromium, which scripts/test installs.
const chromiumPath = "/usr/bin/chromium"

// Start starts chromium for t, stopped when t ends, and returns the
// context of its first tab, already open (on about:blank): run actions in
// it, or derive tabs of their own browser context (their own cookies and
// storage) from it with chromedp.NewContext and WithNewBrowserContext.
// The browser gets a fresh profile in t's temp dir and stays off the
// network on its own account (no background fetches, component updates or
// sync), so a test reaches only the servers it started; extra adds what a
// caller needs beyond that.
func Start(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("chromium is not installed (apt-get install -y chromium; scripts/test does it): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	opts = append(opts, extra...)
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	// The first action starts the browser and opens the tab, which lives
	// as long as the context given to that action: so not one with a
	// timeout.
	if err := chromedp.Do(tab, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return tab
}

// Do runs steps in the tab, failing t if they fail or take longer than
// WaitBound.
func Do(t *testing.T, tab context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(tab, WaitBound)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatal(err)
	}
}

// Eval evaluates expr in the tab's page as it is now, failing t if it
// throws, does not fit T, or takes longer than WaitBound.
func Eval[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	c, cancel := context.WithTimeout(tab, WaitBound)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// Until waits for a JavaScript condition to hold on the tab's page, as
// it is now or after the page navigates, and fails t, showing the page's
// text, if it has not held within WaitBound.
func Until(t *testing.T, tab context.Context, cond string) {
	t.Helper()
	deadline := time.Now().Add(WaitBound)
	for {
		c, cancel := context.WithDeadline(tab, deadline)
		_, err := chromedp.Run(c, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond),
			chromedp.WithPollingTimeout(time.Until(deadline))))
		cancel()
		if err == nil {
			return
		}
		// A navigation while polling ends the page the poll ran in ("cannot
		// find context", "target navigated"); poll again in the new one.
		if time.Now().After(deadline) || tab.Err() != nil {
			body, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			t.Fatalf("waiting for %s: %v\npage:\n%s", cond, err, body)
		}
	}
}

// Submit clicks sel, which posts a form or follows a link, and waits for
// the page it leads to; it returns that page's HTTP status, so a test
// can tell a refusal's page from the page it wanted.
func Submit(t *testing.T, tab context.Context, sel string) int64 {
	t.Helper()
	c, cancel := context.WithTimeout(tab, WaitBound)
	defer cancel()
	resp, err := chromedp.RunResponse(c, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("click %s: %v", sel, err)
	}
	return resp.Status
}

package console_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/internal/browsertest"
)

// The console's own browser tests drive headless chromium through
// internal/browsertest (as the program's do, in
// cmd/askbridge/internal/console) against the console alone on an
// httptest server, so a test can run the session's clock forward. What
// is here is what only these tests need: a desktop-sized tab and signing
// in on the form. scripts/test installs chromium and axe-core.

// chrome starts chromium for t and returns its first tab, desktop-sized,
// in the browser's own fresh profile (no cookies, no storage).
func chrome(t *testing.T) context.Context {
	t.Helper()
	tab := browsertest.Start(t)
	browsertest.Do(t, tab, chromedp.EmulateViewport(1280, 900))
	return tab
}

// signInTab signs the tab in with tok on the sign-in form it shows, and
// waits for the page it leads to, live.
func signInTab(t *testing.T, tab context.Context, tok testToken) {
	t.Helper()
	browsertest.Until(t, tab, `document.getElementById("signin") !== null`)
	browsertest.Do(t, tab, chromedp.SendKeys(chromedp.ID("token"), tok.secret))
	if status := browsertest.Submit(t, tab, "#signin button"); status != http.StatusOK {
		t.Fatalf("sign in as %s: %d", tok.name, status)
	}
	browsertest.Until(t, tab, fmt.Sprintf(`document.querySelector(".top .who") !== null && document.querySelector(".top .who").firstChild.textContent.trim() === %q && document.body.getAttribute("data-live") === "yes"`, tok.name))
}

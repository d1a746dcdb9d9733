package console

import (
	"context"
	"fmt"
	"testing"

	"github.com/askbridge/askbridge/cmd/askbridge/internal/apptest"
	"github.com/askbridge/askbridge/internal/browsertest"
)

// audit fails the test for every serious or critical axe-core violation on
// the tab's page (browsertest.Axe, as the console's own tests check), and
// for a page without exactly one <h1> or with a table header that says
// nothing (axe rates those two below serious, but a screen reader's
// reader navigates by them).
func audit(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	browsertest.Axe(t, ctx, page)
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

package apptest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// A page whose target button is pushed down, once, the moment the mouse
// presses on it: as a live inbox row is when a row above it is drawn
// anew between chromedp measuring it and clicking. The press and release
// then land on different elements, so the button gets no click; Click
// must see that and click again, where the button now is.
const movingPage = `<!doctype html><title>moving</title>
<div id="above" style="height:10px"></div>
<button id="target" style="height:40px">target</button>
<button id="other" style="height:40px">other</button>
<script>
window.clicks = { target: 0, other: 0 };
document.getElementById("target").addEventListener("click", function () { window.clicks.target++; });
document.getElementById("other").addEventListener("click", function () { window.clicks.other++; });
document.addEventListener("mousedown", function shift() {
  document.removeEventListener("mousedown", shift, true);
  document.getElementById("above").style.height = "400px";
}, true);
</script>`

func TestClickLandsWhereThePageMovedTheElement(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(movingPage))
	}))
	defer srv.Close()
	tab := NewChrome(t).Tab(t, 800, 900, false)
	GoTo(t, tab, srv.URL)
	Click(t, tab, "#target")
	if n := Eval[int](t, tab, `window.clicks.target`); n != 1 {
		t.Fatalf("the target was clicked %d times, want once", n)
	}
}

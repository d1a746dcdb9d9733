package console_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// raw fetches path with the browser's cookies and the given request
// headers, and returns the body as sent: setting Accept-Encoding keeps Go's
// transport from unzipping it behind the test's back.
func (b *browser) raw(path string, header ...string) (*http.Response, []byte) {
	b.t.Helper()
	req, _ := http.NewRequestWithContext(b.t.Context(), http.MethodGet, b.base+path, nil)
	req.Header.Set("Accept-Encoding", "identity")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return resp, body
}

func gunzip(t *testing.T, body []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

var assetLink = regexp.MustCompile(`(?:href|src)="(/assets/([a-z]+)\.([0-9a-f]{16})\.([a-z]+))"`)

func TestAssetsAreServedByContentHashAndNeverListed(t *testing.T) {
	e := newEnv(t, nil)
	anon := e.browser(e.srv)
	op := e.signedIn(opAlice)

	// No listing, with a session or without.
	for _, b := range []*browser{anon, op} {
		for _, path := range []string{"/assets/", "/assets", "/assets/nope.css", "/assets/console.css/x"} {
			resp, body := b.raw(path)
			if resp.StatusCode != http.StatusNotFound || strings.Contains(string(body), "console.js") {
				t.Errorf("%s: %d\n%s", path, resp.StatusCode, body)
			}
		}
	}

	links := assetLink.FindAllStringSubmatch(anon.get("/").body, -1)
	if len(links) != 6 {
		t.Fatalf("the page links %d hashed assets, want the two stylesheets, the three scripts and the icon: %v", len(links), links)
	}
	types := map[string]string{"css": "text/css", "js": "text/javascript", "svg": "image/svg+xml"}
	for _, l := range links {
		url, stem, ext := l[1], l[2], l[4]
		resp, body := anon.raw(url)
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Fatalf("%s: %d", url, resp.StatusCode)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", url, cc)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, types[ext]) {
			t.Errorf("%s: Content-Type %q", url, ct)
		}
		if resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s: no CSP", url)
		}

		// Gzipped for a client that takes it, the same bytes unzipped.
		zresp, zbody := anon.raw(url, "Accept-Encoding", "gzip, deflate, br")
		if zresp.Header.Get("Content-Encoding") != "gzip" || gunzip(t, zbody) != string(body) {
			t.Errorf("%s: gzip answered %q", url, zresp.Header.Get("Content-Encoding"))
		}
		if !strings.Contains(zresp.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s: Vary %q", url, zresp.Header.Get("Vary"))
		}

		// The plain name and another release's hash get today's bytes,
		// to be checked again, never kept for a year.
		for _, other := range []string{"/assets/" + stem + "." + ext, "/assets/" + stem + ".0123456789abcdef." + ext} {
			resp, again := anon.raw(other)
			if resp.StatusCode != http.StatusOK || !bytes.Equal(again, body) || resp.Header.Get("Cache-Control") != "no-cache" {
				t.Errorf("%s: %d, Cache-Control %q", other, resp.StatusCode, resp.Header.Get("Cache-Control"))
			}
			etag := resp.Header.Get("ETag")
			if resp, _ := anon.raw(other, "If-None-Match", etag); etag == "" || resp.StatusCode != http.StatusNotModified {
				t.Errorf("%s: revalidating %q got %d", other, etag, resp.StatusCode)
			}
		}
	}
}

func TestPagesAreGzippedWhenTheClientTakesIt(t *testing.T) {
	e := newEnv(t, nil)
	op := e.signedIn(opAlice)
	e.ask(core.AskInput{Text: "Which region?"})

	for _, path := range []string{"/", "/standing", "/nope"} {
		resp, plain := op.raw(path)
		if resp.Header.Get("Content-Encoding") != "" || !strings.Contains(string(plain), "</html>") {
			t.Fatalf("%s without gzip: %q", path, resp.Header.Get("Content-Encoding"))
		}
		for _, accept := range []string{"gzip", "br, gzip;q=0.5", "*"} {
			resp, body := op.raw(path, "Accept-Encoding", accept)
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("%s, Accept-Encoding %q: Content-Encoding %q", path, accept, resp.Header.Get("Content-Encoding"))
			}
			if !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("%s: Vary %q", path, resp.Header.Get("Vary"))
			}
			if page := gunzip(t, body); !strings.Contains(page, "</html>") || len(body) >= len(plain) {
				t.Errorf("%s: %d gzipped bytes for %d", path, len(body), len(plain))
			}
		}
		for _, refuse := range []string{"gzip;q=0", "br", "gzip;q=0, *"} {
			if resp, _ := op.raw(path, "Accept-Encoding", refuse); resp.Header.Get("Content-Encoding") != "" {
				t.Errorf("%s, Accept-Encoding %q: Content-Encoding %q", path, refuse, resp.Header.Get("Content-Encoding"))
			}
		}
	}
}

// The event stream is never compressed: a compressor holds bytes back
// until it has enough, and a page must hear each change as it happens.
func TestTheStreamIsNeverCompressed(t *testing.T) {
	e := newEnv(t, nil)
	op := e.signedIn(opAlice)
	e.ask(core.AskInput{Text: "Which region?"})

	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, e.srv.URL+"/stream?since=0", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := op.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ce := resp.Header.Get("Content-Encoding"); ce != "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("the stream is sent as %q, %q", ce, resp.Header.Get("Content-Type"))
	}
	// The change and "ready" arrive while the stream stays open.
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if sc.Text() == "event: ready" {
			break
		}
	}
	if got := strings.Join(lines, "\n"); !strings.Contains(got, `"kind":"asked"`) || !strings.HasSuffix(got, "event: ready") {
		t.Fatalf("the stream said:\n%s", got)
	}
}

package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// asset is one embedded file, with its content hash and, when that is
// smaller, its gzip form, both made once at start.
type asset struct {
	name   string // as embedded: "console.css"
	hashed string // as pages link it: "console.0123456789abcdef.css"
	hash   string
	body   []byte
	gz     []byte
}

// assets are the console's static files. Pages link each by a name that
// carries its content's hash, so a browser may keep it for a year without
// asking again, and a new release is fetched at once because its names
// differ.
type assets struct {
	byName   map[string]*asset
	byHashed map[string]*asset
}

// hashLen is how many hex digits of the SHA-256 a hashed name carries:
// 64 bits, plenty to tell releases apart.
const hashLen = 16

// immutable is for a hashed name: its bytes can never change.
const immutable = "public, max-age=31536000, immutable"

func loadAssets(fsys fs.FS) (*assets, error) {
	a := &assets{byName: map[string]*asset{}, byHashed: map[string]*asset{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		f := &asset{name: p, hash: hex.EncodeToString(sum[:])[:hashLen], body: body}
		ext := path.Ext(p)
		f.hashed = strings.TrimSuffix(p, ext) + "." + f.hash + ext
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // a valid level: no error
		_, _ = zw.Write(body)
		if zw.Close() == nil && gz.Len() < len(body) {
			f.gz = gz.Bytes()
		}
		a.byName[p], a.byHashed[f.hashed] = f, f
		return nil
	})
	return a, err
}

// url is the link a page gives for the named asset. An unknown name is a
// mistake in a template, and fails the page's rendering.
func (a *assets) url(name string) (string, error) {
	f, ok := a.byName[name]
	if !ok {
		return "", fmt.Errorf("no asset %q", name)
	}
	return "/assets/" + f.hashed, nil
}

// lookup finds the file a request names. The current hashed name is
// cached for good. The plain name, or a hashed name of another release
// (a page served by a replica not yet upgraded, or already upgraded,
// while a rolling deploy is under way), gets the current bytes but must
// be checked again, so nothing of one release is kept under another's
// name.
func (a *assets) lookup(name string) (f *asset, cache string) {
	if f, ok := a.byHashed[name]; ok {
		return f, immutable
	}
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	if dot := strings.LastIndexByte(stem, '.'); dot >= 0 && isHash(stem[dot+1:]) {
		stem = stem[:dot]
	}
	if f, ok := a.byName[stem+ext]; ok {
		return f, "no-cache"
	}
	return nil, ""
}

func isHash(s string) bool {
	if len(s) != hashLen {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// serveAsset serves one static file; there is no listing, and an unknown
// name is the one not-found page.
func (s *Server) serveAsset(w http.ResponseWriter, r *http.Request) {
	f, cache := s.assets.lookup(r.PathValue("file"))
	if f == nil {
		s.notFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", cache)
	h.Add("Vary", "Accept-Encoding")
	body, etag := f.body, `"`+f.hash+`"`
	if f.gz != nil && acceptsGzip(r) {
		body, etag = f.gz, `"`+f.hash+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	// ServeContent types the file by its extension and answers HEAD,
	// If-None-Match and ranges.
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(body))
}

package console

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// acceptsGzip reports whether the client takes gzip: Accept-Encoding
// names it, or else "*", with a quality above zero.
func acceptsGzip(r *http.Request) bool {
	gz, star := -1.0, -1.0
	for _, h := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(h, ",") {
			coding, params, _ := strings.Cut(part, ";")
			q := 1.0
			for p := range strings.SplitSeq(params, ";") {
				k, v, _ := strings.Cut(p, "=")
				if strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
						q = f
					}
				}
			}
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "gzip", "x-gzip":
				gz = q
			case "*":
				star = q
			}
		}
	}
	if gz >= 0 {
		return gz > 0
	}
	return star > 0
}

// gzippers keeps compressors between pages: each holds a large window,
// and a busy inbox renders many pages.
var gzippers = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// compressed is page, gzipped. Pages are whole in memory before they are
// sent (render), so compressing them is one call, and nothing that streams
// (the event stream) ever passes through here.
func compressed(page []byte) []byte {
	var out bytes.Buffer
	zw := gzippers.Get().(*gzip.Writer)
	zw.Reset(&out)
	_, _ = zw.Write(page) // a bytes.Buffer does not fail
	_ = zw.Close()
	gzippers.Put(zw)
	return out.Bytes()
}

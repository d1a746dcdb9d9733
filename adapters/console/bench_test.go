package console_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// BenchmarkInbox renders the inbox's first page for a signed-in operator,
// over HTTP, on the embedded store, with one page's worth of open
// questions (the yardstick) and with 2,000, a quarter of each kind: the
// page read and count of every match, the filters, the templates and
// gzip, per page view. KiB/page is the page as sent, gzipped.
func BenchmarkInbox(b *testing.B) {
	for _, n := range []int{50, 2000} {
		b.Run(fmt.Sprintf("open=%d", n), func(b *testing.B) { benchInbox(b, n) })
	}
}

func benchInbox(b *testing.B, n int) {
	e := newEnv(b, nil)
	for i := range n {
		in := core.AskInput{Text: fmt.Sprintf("question %d", i)}
		switch i % 4 {
		case 1:
			in.Kind, in.Options = core.KindDecision, []core.Option{{ID: "a", Title: "A", Writeup: "one way", Recommended: true}, {ID: "b", Title: "B", Writeup: "another"}}
		case 2:
			in.Kind, in.Tool, in.Arguments = core.KindApproval, "deploy", []byte(`{"service":"billing","env":"prod"}`)
		case 3:
			in.Kind, in.Items = core.KindForm, []core.FormItem{{ID: "r", Question: "Region?", Options: []core.FormOption{{ID: "eu", Label: "EU"}, {ID: "us", Label: "US"}}}}
		}
		e.ask(in)
	}
	br := e.signedIn(opAlice)
	req := func() int64 {
		r, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/", nil)
		r.Header.Set("Accept-Encoding", "gzip") // set by hand, so the body stays compressed
		resp, err := br.c.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		size, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("inbox: %d", resp.StatusCode)
		}
		return size
	}
	var size int64
	for b.Loop() {
		size = req()
	}
	b.ReportMetric(float64(size)/1024, "KiB/page")
}

package console_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/askbridge/askbridge/core"
)

// BenchmarkInbox renders the inbox of 500 open questions, a quarter of
// each kind, for a signed-in operator, over HTTP, on the embedded store:
// the listing, the filters and the templates, per page view.
func BenchmarkInbox(b *testing.B) {
	e := newEnv(b, nil)
	for i := range 500 {
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
		resp, err := br.c.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("inbox: %d", resp.StatusCode)
		}
		return n
	}
	var size int64
	for b.Loop() {
		size = req()
	}
	b.ReportMetric(float64(size)/1024, "KiB/page")
}

package teams

// Benchmarks of the two costs Teams adds per click and per card: checking
// the Bot Connector's token (an RS256 signature and the claims), and
// rendering an Adaptive Card. They run only with -bench; see
// BENCHMARKS.md for the command.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/askbridge/askbridge/adapters/adaptertest"
	"github.com/askbridge/askbridge/adapters/teams/teamsfake"
	"github.com/askbridge/askbridge/core"
)

// BenchmarkCheckToken checks one inbound activity's bearer token with the
// keys already fetched, as every activity after the first is.
func BenchmarkCheckToken(b *testing.B) {
	fake := teamsfake.Start(b, "app", "secret")
	v := newVerifier(fake.OpenIDURL(), "app", http.DefaultClient, time.Now, zerolog.Nop())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := v.start(ctx, func(int, error) bool { return false }); err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, MessagesPath, nil)
	r.Header.Set("Authorization", "Bearer "+fake.Sign(teamsfake.Token{}))
	b.ReportAllocs()
	for b.Loop() {
		tok, err := v.verify(r)
		if err == nil {
			err = v.admits(tok, fake.URL(), "msteams")
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderCard renders every shared card fixture once per op and
// reports the mean card size.
func BenchmarkRenderCard(b *testing.B) {
	fs := adaptertest.CardFixtures()
	total := 0
	for _, f := range fs {
		if f.Card.As == core.DeliverRemind {
			total += Size(Reminder(f.Card))
			continue
		}
		total += Size(Card(f.Card, true))
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range fs {
			if f.Card.As == core.DeliverRemind {
				_ = Reminder(f.Card)
				continue
			}
			_ = Card(f.Card, true)
		}
	}
	b.ReportMetric(float64(total)/float64(len(fs)), "bytes/card")
}

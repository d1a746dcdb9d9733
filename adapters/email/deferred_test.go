package email_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/askbridge/askbridge/adapters/email"
	"github.com/askbridge/askbridge/adapters/email/emailfake"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/coretest"
)

// TestATemporaryRefusalIsNoFailedAttempt: a relay's 4xx says the command
// was not taken and to try again later (RFC 5321, 4.2.1), as a relay at
// its limit of connections or of messages a minute says it, however many
// times in a row: the card waits DeferWait and goes again, using up no
// attempt, until the relay takes it. Before, each 4xx counted as a
// failed attempt, and the outbox's eight in about four minutes dropped
// the card as undelivered while the relay was still pushing back (here,
// six refusals past the outbox's four attempts).
func TestATemporaryRefusalIsNoFailedAttempt(t *testing.T) {
	const refusals = 6
	busy := &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 7, 0}, Message: "too many connections, try again later"}
	limited := &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 7, 1}, Message: "rate limited, try again later"}
	for name, refuse := range map[string]func(*emailfake.Server){
		"at the greeting":  func(f *emailfake.Server) { f.Busy(repeat(busy, refusals)...) },
		"at the recipient": func(f *emailfake.Server) { f.Refuse(alice, repeat(limited, refusals)...) },
	} {
		t.Run(name, func(t *testing.T) {
			fake := emailfake.Start(t, emailfake.Options{})
			refuse(fake)
			host, port, _ := strings.Cut(fake.Addr, ":")
			p, _ := strconv.Atoi(port)
			svc, a, q := mailer(t, email.Options{Host: host, Port: p, TLS: email.TLSNone, DeferWait: time.Millisecond})
			errs := outbox(t, svc, a) // four attempts
			for i := range refusals {
				select {
				case err := <-errs:
					if ra, ok := errors.AsType[*core.RetryAfter](err); !ok || ra.After != time.Millisecond {
						t.Fatalf("refusal %d is %v, want a wait of DeferWait and no failed attempt", i+1, err)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("the relay refused %d times, want %d", i, refusals)
				}
			}
			q = recorded(t, svc, q.ID, errs, false)
			evs := coretest.EventsOf(t, svc, q.ID)
			if count(evs, core.EventNotified) != 1 || count(evs, core.EventUndelivered) != 0 || len(fake.Mailbox(alice)) != 1 {
				t.Fatalf("events %v, %d messages", coretest.Kinds(evs), len(fake.Mailbox(alice)))
			}
		})
	}
}

func repeat(e *smtp.SMTPError, n int) []*smtp.SMTPError {
	out := make([]*smtp.SMTPError, n)
	for i := range out {
		out[i] = e
	}
	return out
}

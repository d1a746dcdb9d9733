package adaptertest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/core/card"
)

// CappedDigest is a "while you were away" digest whose asked and open
// lists core stopped at its cap (its three questions stand for the 500
// it read): their lengths are floors, not counts.
func CappedDigest() core.Digest {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var qs []*core.Question
	for i := range 3 {
		qs = append(qs, &core.Question{ID: core.QuestionID(fmt.Sprintf("q%d", i)), Kind: core.KindClarification,
			Text: "Which region?", State: core.StateOpen, CreatedAt: at, Deadline: at.Add(time.Hour)})
	}
	return core.Digest{From: at, To: at.Add(time.Hour), Asked: qs, Open: qs, AskedMore: true, OpenMore: true}
}

// CheckCappedDigest fails t unless text, a surface's rendering of
// CappedDigest, says its counts are floors ("3 or more") and that more
// may be left out of its list, never "3" as the count.
func CheckCappedDigest(t testing.TB, text string) {
	t.Helper()
	if strings.Count(text, card.DigestCount(3, true)) < 2 {
		t.Errorf("the capped counts do not read %q:\n%s", card.DigestCount(3, true), text)
	}
	if !strings.Contains(text, card.DigestNotListed(0, true)) {
		t.Errorf("the capped list does not say %q:\n%s", card.DigestNotListed(0, true), text)
	}
}

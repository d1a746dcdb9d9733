package peek_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/askbridge/askbridge/adapters/internal/peek"
)

// TestBodyPutsBackWhatItRead: the peek returns at most max bytes, and the
// body then reads whole, from its first byte, and closes the original.
func TestBodyPutsBackWhatItRead(t *testing.T) {
	closed := false
	var body io.ReadCloser = closer{strings.NewReader("0123456789"), &closed}
	got, err := peek.Body(&body, 4)
	if err != nil || string(got) != "0123" {
		t.Fatalf("peek: %q, %v", got, err)
	}
	all, err := io.ReadAll(body)
	if err != nil || string(all) != "0123456789" {
		t.Fatalf("after the peek the body reads %q, %v; want it whole", all, err)
	}
	if body.Close(); !closed {
		t.Fatal("closing the body did not close the original")
	}
	// A read that fails is said so, with what came before it.
	body = io.NopCloser(io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(errors.New("cut"))))
	if got, err := peek.Body(&body, 4); err == nil || string(got) != "ab" {
		t.Fatalf("a failing read: %q, %v", got, err)
	}
}

type closer struct {
	io.Reader
	closed *bool
}

func (c closer) Close() error { *c.closed = true; return nil }

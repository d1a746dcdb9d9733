// Package peek reads the start of a body that something else reads whole
// after: a door that must tell requests apart before the SDK that serves
// them decodes them (MCP's cancel gate and protocol switch), or a client
// that must read a refusal before the SDK that made the request does
// (Discord's rate limits).
package peek

import (
	"bytes"
	"io"
)

// Body reads up to max bytes of *body and puts them back in front of the
// rest, so the next reader reads the body whole; it returns what it read.
// A read error is returned with what was read before it, and the body
// then reads on from there, as it would have.
func Body(body *io.ReadCloser, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(*body, max))
	rest := *body
	*body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), rest), rest}
	return b, err
}

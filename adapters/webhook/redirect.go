package webhook

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/askbridge/askbridge/core"
)

// errRedirect marks a redirect the sender refused to follow.
var errRedirect = errors.New("redirect refused")

// maxRedirects bounds the redirects one attempt follows.
const maxRedirects = 5

// checkRedirect is the client's redirect policy (Options.Client says
// which redirects it follows).
func (s *Sender) checkRedirect(req *http.Request, via []*http.Request) error {
	// The client has just set Referer to the URL redirected from,
	// query and all; a receiver's token must not go on to the next.
	req.Header.Del("Referer")
	switch {
	case len(via) > maxRedirects: // len(via) is the number of this redirect
		return fmt.Errorf("%w: more than %d redirects", errRedirect, maxRedirects)
	case req.Response != nil && req.Response.StatusCode != http.StatusTemporaryRedirect && req.Response.StatusCode != http.StatusPermanentRedirect:
		return fmt.Errorf("%w: a %d would drop the body; only 307 and 308 are followed", errRedirect, req.Response.StatusCode)
	}
	if err := s.live.Load().allow.Check("redirect", req.URL.String()); err != nil {
		return fmt.Errorf("%w: %s", errRedirect, core.ErrorMessage(err))
	}
	return nil
}

// locationGuard refuses, as the sender refuses any redirect it does not
// follow, a redirect whose Location is missing or does not parse, before
// the client reads it. The client's own error quotes a Location that does
// not parse whole, path and query, where a receiver keeps its tokens, and
// that error reaches the log and the event log. A redirect with no
// Location the client hands back as the answer, which would be retried
// as any failing answer until the webhook is given up, though it will
// never be followed.
type locationGuard struct{ next http.RoundTripper }

func (g locationGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		// The statuses whose Location the client reads, as it reads it.
		loc := resp.Header.Get("Location")
		if loc == "" {
			resp.Body.Close()
			return nil, fmt.Errorf("%w: the %d names no Location", errRedirect, resp.StatusCode)
		}
		if _, perr := req.URL.Parse(loc); perr != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("%w: the %d's Location does not parse as a URL", errRedirect, resp.StatusCode)
		}
	}
	return resp, nil
}

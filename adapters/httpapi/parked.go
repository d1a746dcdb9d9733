package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/askbridge/askbridge/core"
)

// A long poll parked in its handler costs what net/http keeps for a
// connection in use: the serving goroutine's stack, a 4 KB buffered reader
// and writer, the response's buffer, the request and its contexts (about
// 28 KB in all, BENCHMARKS.md). Most of a wait is spent parked, so wait
// takes the connection over instead (takeOver): net/http's goroutine and
// buffers go, and what stays is the connection, the store's watch, a small
// record and one goroutine that barely uses its stack, sitting in a read of
// the connection. That read notices the client leaving; its deadline is
// the wait's timeout; and the question's change, or Drain, moves the
// deadline to now, so the same read returns and the goroutine looks. (Two
// goroutines, one in the read and one in a select, cost the collector a
// thousand more stacks to scan per thousand parked waits, a tenth of the
// bridge's CPU in a burst of wake-ups.)

// parked is a wait on a connection taken over from net/http: all it keeps
// until it answers.
type parked struct {
	s      *Server
	conn   net.Conn
	watch  *core.Watcher
	header http.Header // what was set on the response before the take-over; nil for nothing
	line   accessLine
	// holds says whether the wait's token still holds when it answers
	// (heldBy).
	holds func(context.Context) bool
	// release ends the wait's count on its question (waiters.take).
	release func()
	// keepAlive is whether the request lets the connection serve another
	// after the answer (HTTP/1.1, no Connection: close); pre holds bytes
	// net/http had read past the request, the start of the next one.
	keepAlive bool
	pre       []byte
	// until is when the wait times out: the read's deadline, unless a
	// change or Drain has moved it to now (interrupt), which sets poked
	// first.
	until time.Time
	poked atomic.Bool
	// got is what the client sent behind the wait's request, up to
	// maxBehind; overflow, that it sent more.
	got      []byte
	overflow bool
}

// maxBehind bounds what a taken connection keeps of a request sent behind
// the wait's, for the server to read once the connection is back.
const maxBehind = 64 << 10

// behindRead is how much one read takes once the client sends behind its
// wait. Until then a parked wait reads a byte at a time, which costs it
// no buffer; a client streaming bytes at it had each one cost a system
// call, a core kept busy for the whole wait by a megabyte a second.
const behindRead = 4 << 10

// takeOver hijacks the connection of a wait on an open question and parks
// the wait on it, reporting whether it did. It does not on HTTP/2 (which
// cannot hijack), for HEAD (whose response has no body), for a wait sent
// with a body (see HasBody), behind a writer that cannot hijack or is not
// the API's own (the access log line would be lost), or once Drain has
// begun; the handler then waits itself.
func (s *Server) takeOver(w http.ResponseWriter, r *http.Request, watch *core.Watcher, timeout time.Duration, holds func(context.Context) bool, release func()) bool {
	rec, ok := w.(*recorder)
	if !ok || r.ProtoMajor != 1 || r.Method != http.MethodGet || HasBody(r) || !s.taken.Add() {
		return false
	}
	var header http.Header
	if h := w.Header(); len(h) > 0 {
		header = h.Clone()
	}
	conn, brw, err := rec.takeOver()
	if err != nil {
		s.taken.Done()
		return false
	}
	// net/http's buffered reader goes too. Whatever it holds beyond this
	// request is a pipelined one: kept for the server if the connection
	// goes back to it (reuse.go), else left unanswered, as HTTP/1.1
	// allows of a response that closes the connection (the client sends
	// it again on a new one).
	p := &parked{s: s, conn: conn, watch: watch, header: header, line: rec.line, holds: holds, release: release,
		keepAlive: r.ProtoAtLeast(1, 1) && !r.Close, until: time.Now().Add(timeout)}
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		p.pre = append([]byte(nil), b...)
	}
	_ = conn.SetReadDeadline(p.until)
	go p.run()
	return true
}

// HasBody reports whether r was sent with a body, or may be (chunked, or
// waiting on "Expect: 100-continue"). A hijacked connection keeps the
// bytes net/http has not read, and once it goes back to the server those
// of an unread body would be read as the next request: a 400, or, behind
// a proxy that shares its connection among clients, a request smuggled
// in a wait's body answered to the next client.
func HasBody(r *http.Request) bool {
	return r.ContentLength != 0 || len(r.TransferEncoding) > 0 || r.Header.Get("Expect") != ""
}

// interrupt has the parked read return now, to look at the question (a
// change) or at Drain. It runs on the store's goroutine (core.Watcher's
// Notify) or Drain's: it only sets a flag and a deadline.
func (p *parked) interrupt() {
	p.poked.Store(true)
	_ = p.conn.SetReadDeadline(time.Now())
}

// run parks until the question closes, the timeout passes, Drain is
// called or the client leaves, reading the connection all along: a read
// that fails is the client leaving, one past its deadline the timeout,
// unless interrupt moved the deadline, and bytes the client sends
// meanwhile are kept, up to maxBehind (see takeOver). A client that sends
// more is answered at once, the question as it stands, and its
// connection closed: what it sent cannot be served, and reading on would
// only spend the server's time on it until the wait's timeout.
func (p *parked) run() {
	p.watch.Notify(p.interrupt)
	// Drain's interrupt ends before the answer, which may hand the
	// connection back to the server: no deadline is set on it after.
	stopDrain := context.AfterFunc(p.s.draining, p.interrupt)
	answer := func(q *core.Question, err error) {
		stopDrain()
		p.answer(q, err)
	}
	b := make([]byte, 1)
	for {
		if p.poked.Swap(false) {
			if p.s.draining.Err() != nil {
				answer(p.get())
				return
			}
			q, err := p.get()
			if err != nil || !q.Open() {
				answer(q, err)
				return
			}
			// Still open (a form's item was recorded, say): park again
			// until the wait's own deadline. A change meanwhile set poked
			// before its deadline, which this one may have replaced:
			// look again.
			_ = p.conn.SetReadDeadline(p.until)
			continue
		}
		n, err := p.conn.Read(b)
		if err != nil {
			switch {
			case !errors.Is(err, os.ErrDeadlineExceeded):
				stopDrain()
				p.leave()
				return
			case p.poked.Load() || time.Now().Before(p.until):
				// interrupted, or the deadline of an interrupt already
				// looked at: look, or read on
				_ = p.conn.SetReadDeadline(p.until)
				continue
			}
			answer(p.get()) // the wait's timeout
			return
		}
		if !p.behind(b[:n]) {
			answer(p.get())
			return
		}
		if len(b) == 1 {
			b = make([]byte, behindRead)
		}
	}
}

// behind keeps bytes the client sent behind the wait's request and
// reports whether they are still within maxBehind.
func (p *parked) behind(b []byte) bool {
	if len(p.got)+len(b) > maxBehind {
		p.overflow = true
		return false
	}
	p.got = append(p.got, b...)
	return true
}

// get reads the question as it stands, within waitSlack.
func (p *parked) get() (*core.Question, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitSlack)
	defer cancel()
	return p.watch.Read(ctx)
}

// answer sends the wait's response, exactly as the handler would have
// written it, and logs it. Then the connection goes back to the server if
// the API is served through Listener, the request allows it and no Drain
// has begun; else the response says Connection: close, and it is closed.
func (p *parked) answer(q *core.Question, err error) {
	defer p.s.taken.Done()
	p.release()
	p.watch.Stop()
	if p.header == nil {
		p.header = http.Header{}
	}
	rl := p.s.reuse.Load()
	keep := rl != nil && p.keepAlive && !p.overflow && p.s.draining.Err() == nil
	rw := &rendered{header: p.header, body: renderBuf()}
	q, err = heldBy(p.holds, q, err)
	p.s.answerWait(rw, p.line.method, p.line.path, q, err)
	if err := rw.send(p.conn, !keep); err != nil {
		keep = false
		p.s.log.Debug().Err(err).Str("path", p.line.path).Msg("wait: the response could not be sent")
	}
	putRenderBuf(rw.body)
	p.s.logAccess(p.line, rw.status)
	if keep {
		if c := p.reclaim(); c != nil {
			rl.giveBack(c)
			return
		}
	}
	_ = p.conn.Close()
}

// reclaim returns the connection, with what the wait's read had taken of
// the next request, for the server to serve again. (The read has
// returned: run answers only after it.)
func (p *parked) reclaim() net.Conn {
	if err := p.conn.SetDeadline(time.Time{}); err != nil {
		return nil
	}
	if pre := append(p.pre, p.got...); len(pre) > 0 {
		return &prefixConn{Conn: p.conn, pre: pre}
	}
	return p.conn
}

// leave ends a wait whose client has gone: nobody to answer. Its access
// log line is what a handler whose caller left writes.
func (p *parked) leave() {
	defer p.s.taken.Done()
	p.release()
	p.watch.Stop()
	_ = p.conn.Close()
	p.s.logAccess(p.line, http.StatusOK)
}

// rendered is a response built in memory, for a connection taken over from
// net/http.
type rendered struct {
	header http.Header
	status int
	body   *bytes.Buffer // from renderBuf
}

// renderBufs holds the buffers taken waits render their responses in. One
// close can wake hundreds of waits at once, and each would otherwise grow
// two buffers of its own, the body and the whole response, only to drop
// them a moment later.
var renderBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledRender is the largest buffer put back for reuse, so that one
// huge response does not stay pinned in the pool.
const maxPooledRender = 64 << 10

func renderBuf() *bytes.Buffer { return renderBufs.Get().(*bytes.Buffer) }

func putRenderBuf(b *bytes.Buffer) {
	if b.Cap() > maxPooledRender {
		return
	}
	b.Reset()
	renderBufs.Put(b)
}

func (r *rendered) Header() http.Header { return r.header }

func (r *rendered) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *rendered) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

// send writes the response on conn as HTTP/1.1 with its Content-Length, a
// Date as net/http sends, and Connection: close if closing, within
// waitSlack.
func (r *rendered) send(conn net.Conn, closing bool) error {
	r.WriteHeader(http.StatusOK)
	r.header.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	resp := http.Response{
		StatusCode: r.status, ProtoMajor: 1, ProtoMinor: 1, Header: r.header,
		ContentLength: int64(r.body.Len()), Body: io.NopCloser(r.body), Close: closing,
	}
	out := renderBuf()
	defer putRenderBuf(out)
	// Room for the head and the body, so the body's copy does not grow it.
	out.Grow(r.body.Len() + 1024)
	if err := resp.Write(out); err != nil {
		return err
	}
	_ = conn.SetWriteDeadline(time.Now().Add(waitSlack))
	_, err := conn.Write(out.Bytes())
	return err
}

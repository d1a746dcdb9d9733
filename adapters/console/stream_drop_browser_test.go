package console_test

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/askbridge/askbridge/adapters/console"
	"github.com/askbridge/askbridge/core"
	"github.com/askbridge/askbridge/internal/browsertest"
)

// silentLink stands between the browser and the console as a network
// does, and can drop silently: once cut, it passes no byte either way
// and closes nothing, as a Wi-Fi that goes away, a NAT that forgets a
// connection or a host that dies without a word. Connections made after
// it mends pass again; those open across the cut stay dead, as they do
// once a NAT has forgotten them.
type silentLink struct {
	url  string
	mu   sync.Mutex
	cut  bool
	dead map[net.Conn]bool // the connections open when it was cut
	live map[net.Conn]bool
}

func newSilentLink(t *testing.T, target string) *silentLink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &silentLink{url: "http://" + ln.Addr().String(), dead: map[net.Conn]bool{}, live: map[net.Conn]bool{}}
	var conns sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		l.mu.Lock()
		for c := range l.live {
			c.Close()
		}
		for c := range l.dead {
			c.Close()
		}
		l.mu.Unlock()
		conns.Wait()
	})
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				l.serve(in, target)
			}()
		}
	}()
	return l
}

// serve passes in's bytes to a connection of its own to target and back,
// as long as the link is not cut; a connection made while it is cut
// hangs unanswered.
func (l *silentLink) serve(in net.Conn, target string) {
	l.mu.Lock()
	l.live[in] = true
	cut := l.cut
	if cut {
		l.dead[in] = true
	}
	l.mu.Unlock()
	defer in.Close()
	if cut {
		_, _ = io.Copy(io.Discard, in)
		return
	}
	out, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	pass := func(to, from net.Conn) {
		buf := make([]byte, 4096)
		for {
			n, err := from.Read(buf)
			if n > 0 && !l.isDead(in) {
				if _, werr := to.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		done <- struct{}{}
	}
	go pass(out, in)
	go pass(in, out)
	<-done
}

func (l *silentLink) isDead(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dead[c]
}

// drop cuts the link: every connection open now goes silent for good.
func (l *silentLink) drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = true
	for c := range l.live {
		l.dead[c] = true
	}
}

// mend lets new connections through again.
func (l *silentLink) mend() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = false
}

// TestALiveInboxNoticesASilentDrop: the network between a browser and the
// console goes away without a word (nothing closes the event stream; the
// page hears nothing more). Within the page's check it says the
// connection is lost and holds its answer controls, rather than go on
// offering cards that may be stale as current; once the network is back
// it comes back live, with what changed meanwhile.
func TestALiveInboxNoticesASilentDrop(t *testing.T) {
	t.Cleanup(console.SetStreamCheck(2 * time.Second))
	e := newEnv(t, nil)
	link := newSilentLink(t, e.srv.Listener.Addr().String())
	before := e.ask(core.AskInput{Text: "Asked before the drop?"})
	tab := chrome(t)
	browsertest.Do(t, tab, chromedp.Navigate(link.url+"/"))
	signInTab(t, tab, opAlice)
	browsertest.Until(t, tab, `document.querySelector("#card-`+string(before.ID)+`") !== null`)

	link.drop()
	browsertest.Until(t, tab, `document.body.getAttribute("data-live") === "no" && !document.getElementById("offline").hidden`)
	if got := browsertest.Eval[string](t, tab, `document.querySelector("#card-`+string(before.ID)+` form.answer button[type=submit]").getAttribute("aria-disabled")`); got != "true" {
		t.Error("the page says the connection is lost but still offers to send an answer")
	}

	meanwhile := e.ask(core.AskInput{Text: "Asked while the network was down?"})
	link.mend()
	browsertest.Until(t, tab, `document.querySelector("#card-`+string(meanwhile.ID)+`[data-state=open]") !== null && document.body.getAttribute("data-live") === "yes"`)
	if !browsertest.Eval[bool](t, tab, `document.getElementById("offline").hidden && !document.querySelector("#card-`+string(meanwhile.ID)+` form.answer button[type=submit]").hasAttribute("aria-disabled")`) {
		t.Fatal("the page came back but still says the connection is lost")
	}
}

// TestADropLeavesTheWriterWriting: a keyboard user is writing an answer
// in an inbox row when the connection drops. The page pauses sending (the
// send button says it is unavailable, and pressing it sends nothing), but
// the field keeps the keyboard's focus and takes what they go on typing;
// once the page is live again they send it, whole, without reaching for
// the mouse. Before, the drop disabled the whole form: the field lost
// focus to the page's body and the keys typed meanwhile went nowhere.
func TestADropLeavesTheWriterWriting(t *testing.T) {
	t.Cleanup(console.SetStreamCheck(2 * time.Second))
	e := newEnv(t, nil)
	link := newSilentLink(t, e.srv.Listener.Addr().String())
	q := e.ask(core.AskInput{Text: "Which region should the replica go to?"})
	field, row := "text-"+string(q.ID), "#card-"+string(q.ID)
	send := row + " form.answer button[type=submit]"
	tab := chrome(t)
	browsertest.Do(t, tab, chromedp.Navigate(link.url+"/"))
	signInTab(t, tab, opAlice)
	browsertest.Do(t, tab, chromedp.Click(chromedp.CSS(row+" > summary")), chromedp.SendKeys(chromedp.ID(field), "eu-"))

	link.drop()
	browsertest.Until(t, tab, `document.body.getAttribute("data-live") === "no" && !document.getElementById("offline").hidden`)
	focused := `document.activeElement === document.getElementById("` + field + `")`
	if !browsertest.Eval[bool](t, tab, focused) {
		t.Fatalf("the drop took the keyboard's focus from the answer to %s", browsertest.Eval[string](t, tab, `document.activeElement.tagName`))
	}
	browsertest.Do(t, tab, chromedp.KeyEvent("west-1"))
	if got := browsertest.Eval[string](t, tab, valueOf(field)); got != "eu-west-1" {
		t.Fatalf("typed while the page was paused, the answer reads %q", got)
	}
	// Tab, from the answer, reaches its send button, which says it is
	// unavailable; Enter on it sends nothing.
	onSend := `document.activeElement === document.querySelector("` + send + `")`
	browsertest.Do(t, tab, chromedp.KeyEvent("\t"))
	if !browsertest.Eval[bool](t, tab, onSend) {
		t.Fatal("Tab from the answer does not reach its send button")
	}
	if got := browsertest.Eval[string](t, tab, `document.activeElement.getAttribute("aria-disabled")`); got != "true" {
		t.Errorf("the send button does not say it is unavailable while paused (aria-disabled %q)", got)
	}
	browsertest.Do(t, tab, chromedp.KeyEvent("\r"))
	if browsertest.Eval[bool](t, tab, `document.querySelector("`+row+`").getAttribute("aria-busy") === "true"`) || !e.get(q.ID).Open() {
		t.Fatal("a send pressed while the page was paused went out")
	}
	browsertest.Axe(t, tab, "the inbox paused after a drop")

	link.mend()
	browsertest.Until(t, tab, `document.body.getAttribute("data-live") === "yes"`)
	if !browsertest.Eval[bool](t, tab, onSend+` && !document.activeElement.hasAttribute("aria-disabled")`) {
		t.Fatal("back live, the keyboard is no longer on a send button that is available")
	}
	browsertest.Do(t, tab, chromedp.KeyEvent("\r"))
	browsertest.Until(t, tab, `document.querySelector("`+row+` .recorded-box") !== null`)
	if got := e.get(q.ID).Resolution; got == nil || got.Answer != "eu-west-1" {
		t.Fatalf("recorded %+v, want the whole answer", got)
	}
}

// askbridge console: keeps a live page's event stream open, and its answer
// controls paused while the page may be behind. console.js hears each
// change through follow and fetches what changed; this says when the page
// is current (the stream's "ready": caught up with the log) and when it
// may not be. Pages that follow no stream do not load it.
//
// EventSource reconnects by itself after a dropped connection, sending its
// Last-Event-ID, and the server replays what was missed before it says
// "ready" again. But a reconnect answered with anything but 200 (a 502
// while replicas roll, a 500 while a store fails over, a 401 once the
// session has ended) closes it for good, as the HTML spec says, and the
// page would stay "Connection lost" until reloaded by hand. So once it is
// closed, the stream is probed after a bounded backoff and, when the
// console answers again, opened anew from the last event the page saw; a
// 401 reloads the page, which then shows the sign-in form, since no
// reconnect will help.
//
// A network that drops without a word (a Wi-Fi gone, a NAT that forgot
// the connection, a host that died) closes nothing: EventSource waits on
// a dead connection for ever, and the server's keep-alives are comments
// it never reports. So the stream must prove itself: every check (the
// server's data-stream-check, in ms) it is opened afresh from the last
// event seen, and a stream that has not said "ready" within a check of
// being opened is lost, as is a probe that has not answered.
(function () {
  "use strict";
  var body = document.body;
  var offline = document.getElementById("offline");
  var live = true;
  var check = parseInt(body.getAttribute("data-stream-check") || "", 10) || 20000;
  // The backoff's first and longest waits, in ms, measured in checks (1 s
  // and 30 s at the usual 20 s check): a deploy's few seconds are caught
  // quickly, and a long outage costs a probe per check and a half. A test
  // that shortens the check shortens the backoff with it.
  var first = check / 20, most = check * 3 / 2;

  // held says whether a card's controls stay disabled whatever the stream
  // says: its answer is on its way (aria-busy; the row is drawn again
  // when the answer comes back), or its fresh copy failed to arrive and
  // is being fetched again (data-retry; the copy drawn replaces it).
  function held(f) {
    return f.closest("[aria-busy='true'], [data-retry]") !== null;
  }

  // pause marks the buttons that send an answer in root's cards as
  // unavailable while the page is not live, and as available again once
  // it is. Only sending is paused (see the submit guard below): a field
  // being written in keeps its text, the keyboard's focus and what is
  // typed next, which a disabled form would drop.
  function pause(root) {
    root.querySelectorAll(".card form button:not(.enter-guard)").forEach(function (b) {
      if (live) {
        b.removeAttribute("aria-disabled");
      } else {
        b.setAttribute("aria-disabled", "true");
      }
    });
  }

  // setLive lets answers be sent only while the page is known to be
  // current; lost says whether to tell the reader the stream dropped.
  function setLive(on, lost) {
    live = on;
    body.classList.toggle("is-offline", !on);
    if (offline) {
      offline.hidden = on || !lost;
    }
    document.querySelectorAll(".card fieldset").forEach(function (f) {
      f.disabled = held(f);
    });
    pause(document);
    body.setAttribute("data-live", on ? "yes" : "no");
  }

  // While the page may be behind, no card's form is sent, whichever way
  // it is submitted (a button, Enter in a field): this runs before any
  // other listener of the page, and console.js and kept.js hear nothing.
  window.addEventListener("submit", function (e) {
    if (!live && e.target.closest && e.target.closest(".card")) {
      e.preventDefault();
      e.stopPropagation();
    }
  }, true);

  // resumed is the stream's address reading on after event id last (the
  // server reads ?since as it reads Last-Event-ID); the page's own until
  // the stream has named an event.
  function resumed(src, last) {
    if (last === "") {
      return src;
    }
    var u = new URL(src, window.location.href);
    u.searchParams.set("since", last);
    return u.pathname + u.search;
  }

  // follow opens src and calls onChange with each change it tells of,
  // for as long as the page is open.
  function follow(src, onChange) {
    var last = "";
    var wait = first;
    var es = null; // the stream open now, if any
    var proving = 0, renewing = 0; // its timers: see open

    function seen(e) {
      if (e.lastEventId) {
        last = e.lastEventId;
      }
    }

    function stop() {
      if (es) {
        es.close();
        es = null;
      }
      window.clearTimeout(proving);
      window.clearTimeout(renewing);
    }

    // lost gives up on a stream that has not proved itself in time: the
    // page says so, and probes until the console answers.
    function lost() {
      stop();
      setLive(false, true);
      retry();
    }

    // open opens the stream from the last event seen, closing the one
    // open, if any. It must say "ready" within a check (proving); once
    // it has, it is opened afresh a check later (renewing), which is
    // how a silent drop is found. The page stays live across a renewal:
    // the new stream replays whatever the old one had not told.
    function open() {
      stop();
      var mine = new EventSource(resumed(src, last));
      es = mine;
      proving = window.setTimeout(lost, check);
      mine.addEventListener("change", function (e) {
        if (es !== mine) {
          return;
        }
        seen(e);
        var d;
        try {
          d = JSON.parse(e.data);
        } catch (err) {
          return;
        }
        onChange(d);
      });
      mine.addEventListener("ready", function (e) {
        if (es !== mine) {
          return;
        }
        seen(e);
        wait = first;
        window.clearTimeout(proving);
        window.clearTimeout(renewing);
        renewing = window.setTimeout(open, check);
        setLive(true);
        // The first time the page is live, for anyone measuring how soon
        // it can be used (the browser tests record it in BENCHMARKS.md).
        if (window.performance && performance.mark && performance.getEntriesByName("askbridge-live").length === 0) {
          performance.mark("askbridge-live");
        }
      });
      mine.addEventListener("error", function () {
        if (es !== mine) {
          return;
        }
        setLive(false, true);
        window.clearTimeout(proving);
        window.clearTimeout(renewing);
        if (mine.readyState === EventSource.CLOSED) {
          es = null;
          retry();
        } else {
          // EventSource reconnects by itself; that too must prove itself.
          proving = window.setTimeout(lost, check);
        }
      });
    }

    // retry probes again after the next wait of the backoff, taken at
    // random from its second half, so the pages of everyone who lost the
    // console at once do not all come back in the same instant.
    function retry() {
      var d = wait;
      wait = Math.min(wait * 2, most);
      window.setTimeout(probe, d / 2 + Math.random() * d / 2);
    }

    // probe asks for the stream to learn its status, which EventSource
    // never tells, and opens it only once the console answers 200. A
    // probe unanswered within a check is given up, as a silent network
    // would leave it waiting for ever.
    function probe() {
      var ctl = new AbortController();
      var timer = window.setTimeout(function () {
        ctl.abort();
      }, check);
      fetch(resumed(src, last), {
        credentials: "same-origin", cache: "no-store",
        headers: { Accept: "text/event-stream" }, signal: ctl.signal
      }).then(function (resp) {
        window.clearTimeout(timer);
        ctl.abort(); // its status was all that was wanted
        if (resp.status === 401) {
          window.location.reload();
        } else if (resp.ok) {
          open();
        } else {
          retry();
        }
      }, function () {
        window.clearTimeout(timer);
        retry();
      });
    }

    // Until the stream has caught up with what changed since the page was
    // rendered, the page may already be behind: hold the controls.
    setLive(false, false);
    open();
  }

  window.askbridgeStream = {
    follow: follow,
    pause: pause,
    live: function () {
      return live;
    }
  };
})();

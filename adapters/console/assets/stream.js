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
(function () {
  "use strict";
  var body = document.body;
  var offline = document.getElementById("offline");
  var live = true;
  // The backoff's first and longest waits, in ms: a deploy's few seconds
  // are caught quickly, and a long outage costs a probe per half minute.
  var first = 1000, most = 30000;

  // held says whether a card's controls stay paused whatever the stream
  // says: its answer is on its way (aria-busy; the row is drawn again
  // when the answer comes back), or its fresh copy failed to arrive and
  // is being fetched again (data-retry; the copy drawn replaces it).
  function held(f) {
    return f.closest("[aria-busy='true'], [data-retry]") !== null;
  }

  // setLive enables the answer controls only while the page is known to
  // be current; lost says whether to tell the reader the stream dropped.
  function setLive(on, lost) {
    live = on;
    body.classList.toggle("is-offline", !on);
    if (offline) {
      offline.hidden = on || !lost;
    }
    document.querySelectorAll(".card fieldset").forEach(function (f) {
      f.disabled = !on || held(f);
    });
    body.setAttribute("data-live", on ? "yes" : "no");
  }

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

    function seen(e) {
      if (e.lastEventId) {
        last = e.lastEventId;
      }
    }

    function open() {
      var es = new EventSource(resumed(src, last));
      es.addEventListener("change", function (e) {
        seen(e);
        var d;
        try {
          d = JSON.parse(e.data);
        } catch (err) {
          return;
        }
        onChange(d);
      });
      es.addEventListener("ready", function (e) {
        seen(e);
        wait = first;
        setLive(true);
        // The first time the page is live, for anyone measuring how soon
        // it can be used (the browser tests record it in BENCHMARKS.md).
        if (window.performance && performance.mark && performance.getEntriesByName("askbridge-live").length === 0) {
          performance.mark("askbridge-live");
        }
      });
      es.addEventListener("error", function () {
        setLive(false, true);
        if (es.readyState === EventSource.CLOSED) {
          retry();
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
    // never tells, and opens it only once the console answers 200.
    function probe() {
      var ctl = new AbortController();
      fetch(resumed(src, last), {
        credentials: "same-origin", cache: "no-store",
        headers: { Accept: "text/event-stream" }, signal: ctl.signal
      }).then(function (resp) {
        ctl.abort(); // its status was all that was wanted
        if (resp.status === 401) {
          window.location.reload();
        } else if (resp.ok) {
          open();
        } else {
          retry();
        }
      }, retry);
    }

    // Until the stream has caught up with what changed since the page was
    // rendered, the page may already be behind: hold the controls.
    setLive(false, false);
    open();
  }

  window.askbridgeStream = {
    follow: follow,
    live: function () {
      return live;
    }
  };
})();

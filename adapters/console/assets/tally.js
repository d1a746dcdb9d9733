// askbridge console: keeps an inbox page's numbers true while it is
// live. The server draws them once, with the page: the open count (in the
// heading and the tab's title), the note of which rows of the open list
// the page shows, and, while the page is open, the notice of new
// questions that landed on other pages. console.js tells this what
// arrives, what closes and what leaves, and where a new row belongs.
(function () {
  "use strict";

  // tally reads list's paging and counts as the server drew them.
  function tally(list) {
    var paged = list.getAttribute("data-paged") === "yes";
    var more = list.getAttribute("data-more") === "yes";
    var total = parseInt(list.getAttribute("data-total") || "0", 10);
    // away holds the new questions counted as on other pages of the
    // list, by id, with their rank, while they are open: one that closes
    // no longer waits there, and the notice stops counting it.
    var away = Object.create(null);
    // settled holds the questions the page has seen closed (fetched so
    // when it first heard of them, or seen to close) and counts no more:
    // a closing event told after that (the "answered" of a question a
    // rule decided as it was asked, which the page fetched closed before
    // the close was told) must not take it off the count again. A close
    // of a question the page never heard of takes one off: the server
    // drew the count when the stream started (pages.go's listed), so it
    // was open and counted then.
    var settled = Object.create(null);
    // The page's place in the open list (#page-note): from is where its
    // first row stood when the page was drawn, and ahead how many open
    // questions have since arrived (+) or closed (-) before start, that
    // row's rank. Only a later page has anything before it.
    var note = document.getElementById("page-note");
    var from = note ? parseInt(note.getAttribute("data-from") || "1", 10) || 1 : 1;
    var first = list.querySelector(":scope > .qrow");
    var start = first ? first.getAttribute("data-rank") : null;
    var ahead = 0;

    // before reports whether a question of that rank sits ahead of this
    // page in the list, on an earlier page.
    function before(rank) {
      return paged && start !== null && rank < start;
    }

    function set(id, text) {
      var el = document.getElementById(id);
      if (el) {
        el.textContent = text;
      }
    }

    var t = {
      // counted moves the open count as a question goes from one state
      // to another; null is a question the page did not know of.
      counted: function (was, now) {
        if (was === "open" && now !== "open") {
          total--;
        } else if (was === null && now === "open") {
          total++;
        }
      },

      // fits reports whether this page of the list holds a row of that
      // rank: a later page starts after its first row, and a page with
      // more after it ends at its last.
      fits: function (rank) {
        var rows = list.querySelectorAll(":scope > .qrow:not(.stub)");
        if (rows.length === 0) {
          return !paged;
        }
        if (paged && rank < rows[0].getAttribute("data-rank")) {
          return false;
        }
        return !(more && rank > rows[rows.length - 1].getAttribute("data-rank"));
      },

      // elsewhere counts a new open question that another page of the
      // list holds.
      elsewhere: function (id, rank) {
        away[id] = rank;
        if (before(rank)) {
          ahead++;
        }
      },

      // settle notes a question the page has seen closed, counted now
      // (or never) as it should be.
      settle: function (id) {
        settled[id] = true;
      },

      // isAway reports whether id is counted as new on another page.
      isAway: function (id) {
        return id in away;
      },

      // left hears what became of a question the page does not show: row
      // is its row as fetched now, or null when the page's filters leave
      // it out or it is gone. One still open changes nothing, nor does
      // one settled.
      left: function (id, row) {
        if (id in settled || (row ? row.getAttribute("data-state") === "open" : !(id in away))) {
          return;
        }
        var rank = row ? row.getAttribute("data-rank") : away[id];
        delete away[id];
        t.settle(id);
        t.counted("open", "closed");
        if (before(rank)) {
          ahead--;
        }
        t.show();
      },

      // show puts the numbers on the page.
      show: function () {
        var n = Math.max(total, 0);
        set("open-count", String(n));
        // The tab's title leads with the same count (the inbox's Title),
        // so a tab in the background shows a new question arrive.
        document.title = document.title.replace(/^\d+ open/, n + " open");
        var empty = document.getElementById("empty");
        if (empty) {
          // A stub is a row not yet known to belong here (console.js).
          empty.hidden = list.querySelector(":scope > :not(.stub)") !== null;
        }
        var notice = document.getElementById("elsewhere");
        if (notice) {
          var k = Object.keys(away).length;
          notice.hidden = k === 0;
          notice.textContent = k === 1 ? "1 new question is on another page of the list." :
            k + " new questions are on other pages of the list.";
        }
        if (note) {
          // A row that closed stays, with its outcome, but is no longer
          // one of the open list's, which the count above names.
          var open = list.querySelectorAll(":scope > .qrow[data-state='open']:not(.stub)").length;
          var at = Math.max(from + ahead, 1);
          note.hidden = open === 0;
          set("page-from", String(at));
          set("page-to", String(at + open - 1));
        }
      }
    };
    return t;
  }

  window.askbridgeTally = tally;
})();

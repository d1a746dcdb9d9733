// askbridge console: relative times ("asked 5m ago", "due in 3m") are
// worded by the server as it draws a row or card, and a page left open
// would keep them as they were. This words them again from their
// datetime, by the server's rules (view.go: age and due) and on the
// server's clock, on every page.
(function () {
  "use strict";
  var body = document.body;

  // skew is how far the browser's clock is from the one that drew the
  // page.
  var skew = 0;
  var drawn = Date.parse(body.getAttribute("data-now") || "");
  if (!isNaN(drawn)) {
    skew = drawn - Date.now();
  }
  var minute = 60 * 1000, hour = 60 * minute, day = 24 * hour;

  // span is a duration of at least a minute, short and rough.
  function span(d) {
    if (d < hour) {
      return Math.floor(d / minute) + "m";
    }
    if (d < 48 * hour) {
      return Math.floor(d / hour) + "h";
    }
    return Math.floor(d / day) + "d";
  }

  function ago(d) {
    return d < minute ? "just now" : span(d) + " ago";
  }

  function due(left) {
    if (left <= 0) {
      return "due now";
    }
    return left < minute ? "due in under a minute" : "due in " + span(left);
  }

  // words are the wordings by data-rel, of how long ago datetime was.
  var words = {
    age: ago,
    asked: function (d) {
      return "asked " + ago(d);
    },
    due: function (d) {
      return due(-d);
    }
  };

  function tick() {
    var now = Date.now() + skew;
    document.querySelectorAll("time[data-rel]").forEach(function (el) {
      var word = words[el.getAttribute("data-rel")];
      var at = Date.parse(el.getAttribute("datetime") || "");
      if (!word || isNaN(at)) {
        return;
      }
      var text = word(now - at);
      if (el.textContent !== text) {
        el.textContent = text;
      }
    });
  }
  // The coarsest wording moves once a minute; a few seconds late is
  // close enough, and a pass over the page's times costs next to nothing.
  window.setInterval(tick, 5000);
})();

// askbridge console: keeps the page live over the event stream. The server
// renders every card; this only fetches a card again when its question
// changes, and pauses the answer controls while the stream is down, so a
// card that may be stale is never offered as answerable.
(function () {
  "use strict";
  var body = document.body;
  var src = body.getAttribute("data-stream");
  if (!src || !window.EventSource) {
    return;
  }
  var offline = document.getElementById("offline");
  var list = document.getElementById("inbox");
  var live = true;

  // setLive enables the answer controls only while the page is known to
  // be current; lost says whether to tell the reader the stream dropped.
  function setLive(on, lost) {
    live = on;
    body.classList.toggle("is-offline", !on);
    if (offline) {
      offline.hidden = on || !lost;
    }
    var sets = document.querySelectorAll(".card fieldset");
    for (var i = 0; i < sets.length; i++) {
      sets[i].disabled = !on;
    }
    body.setAttribute("data-live", on ? "yes" : "no");
  }

  function parse(html) {
    var t = document.createElement("template");
    t.innerHTML = html.trim();
    return t.content.firstElementChild;
  }

  function count() {
    if (!list) {
      return;
    }
    var n = list.querySelectorAll(".card[data-state='open']").length;
    var c = document.getElementById("open-count");
    if (c) {
      c.textContent = String(n);
    }
    var empty = document.getElementById("empty");
    if (empty) {
      empty.hidden = list.children.length > 0;
    }
  }

  // insert places a new card where the API's order puts it.
  function insert(card) {
    var rank = card.getAttribute("data-rank");
    var kids = list.children;
    for (var i = 0; i < kids.length; i++) {
      if (kids[i].getAttribute("data-rank") > rank) {
        list.insertBefore(card, kids[i]);
        return;
      }
    }
    list.appendChild(card);
  }

  // fieldKey names a field alike in a card and in its fresh copy: by id,
  // or else by its form and name (and value, for a choice).
  function fieldKey(f) {
    if (f.id) {
      return "#" + f.id;
    }
    var form = f.form;
    var k = form ? [form.getAttribute("action"), form.className, form.getAttribute("data-call"),
      form.getAttribute("data-item")].join("|") : "";
    k += "|" + f.name;
    if (f.type === "radio" || f.type === "checkbox") {
      k += "=" + f.value;
    }
    return k;
  }

  // foldKey names a fold by the first field with an id inside it.
  function foldKey(d) {
    var f = d.querySelector("[id]");
    return f ? f.id : "";
  }

  // keepDraft carries what the reader has typed or chosen and not sent,
  // the folds they opened and where their caret was, from a card over to
  // its fresh copy. A card is drawn again whenever anyone acts on its
  // question (one call of a batch, a vote), and a half-written reason or
  // edited arguments must not be lost to someone else's click. Fields the
  // fresh copy no longer has (the question closed) are let go.
  function keepDraft(cur, next) {
    var twins = {};
    next.querySelectorAll("input, textarea").forEach(function (f) {
      twins[fieldKey(f)] = f;
    });
    var focus = null;
    cur.querySelectorAll("input, textarea").forEach(function (f) {
      var twin = twins[fieldKey(f)];
      if (f.type === "hidden" || !twin) {
        return;
      }
      if (f.type === "radio" || f.type === "checkbox") {
        if (f.checked !== f.defaultChecked) {
          twin.checked = f.checked;
        }
      } else if (f.value !== f.defaultValue) {
        twin.value = f.value;
      }
      if (f === document.activeElement) {
        focus = { el: twin, from: f.selectionStart, to: f.selectionEnd };
      }
    });
    var folds = {};
    next.querySelectorAll("details").forEach(function (d) {
      folds[foldKey(d)] = d;
    });
    cur.querySelectorAll("details[open]").forEach(function (d) {
      var twin = folds[foldKey(d)];
      if (twin) {
        twin.open = true;
      }
    });
    return focus;
  }

  // pending holds one fetch per element, so a burst of events for one
  // question fetches it once more, not once per event.
  var pending = {};

  function refresh(el) {
    var url = el.getAttribute("data-src");
    if (!url || pending[url]) {
      if (url) {
        pending[url] = "again";
      }
      return;
    }
    pending[url] = "busy";
    fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (resp) {
        if (resp.status === 401) {
          window.location.reload();
          return null;
        }
        if (resp.status === 204 || resp.status === 404) {
          return "";
        }
        if (!resp.ok) {
          throw new Error("status " + resp.status);
        }
        return resp.text();
      })
      .then(function (html) {
        if (html === null) {
          return;
        }
        var cur = document.getElementById(el.id);
        if (html === "") {
          if (cur && list && list.contains(cur)) {
            cur.remove();
          }
        } else if (cur) {
          var next = parse(html);
          next.querySelectorAll("fieldset").forEach(function (f) {
            f.disabled = !live;
          });
          var focus = keepDraft(cur, next);
          cur.replaceWith(next);
          if (focus && !focus.el.matches(":disabled")) {
            focus.el.focus();
            if (focus.from !== null && focus.el.setSelectionRange) {
              focus.el.setSelectionRange(focus.from, focus.to);
            }
          }
          if (cur.classList.contains("stub")) {
            next.remove();
            insert(next);
          }
        }
        count();
      })
      .catch(function () {
        // This card may be behind: hold its controls and fetch it again.
        var cur = document.getElementById(el.id);
        if (cur) {
          cur.querySelectorAll("fieldset").forEach(function (f) {
            f.disabled = true;
          });
        }
        window.setTimeout(function () {
          refresh(el);
        }, 1000);
      })
      .finally(function () {
        var again = pending[url] === "again";
        delete pending[url];
        if (again) {
          refresh(el);
        }
      });
  }

  function changed(id, kind) {
    var els = document.querySelectorAll("[data-qid='" + CSS.escape(id) + "'][data-src]");
    for (var i = 0; i < els.length; i++) {
      refresh(els[i]);
    }
    if (els.length === 0 && list && kind === "asked") {
      // A hidden stub stands in for the new card until it arrives.
      var filter = list.getAttribute("data-filter");
      var stub = document.createElement("article");
      stub.id = "card-" + id;
      stub.className = "card stub";
      stub.hidden = true;
      stub.setAttribute("data-qid", id);
      stub.setAttribute("data-src", "/cards/" + encodeURIComponent(id) + (filter ? "?" + filter : ""));
      list.appendChild(stub);
      refresh(stub);
    }
  }

  // Until the stream has caught up with what changed since the page was
  // rendered, the page may already be behind: hold the controls.
  setLive(false, false);
  var es = new EventSource(src);
  es.addEventListener("change", function (e) {
    var d;
    try {
      d = JSON.parse(e.data);
    } catch (err) {
      return;
    }
    changed(d.question_id, d.kind);
  });
  es.addEventListener("ready", function () {
    setLive(true);
  });
  es.addEventListener("error", function () {
    // EventSource reconnects by itself, sending its Last-Event-ID, and the
    // server replays what was missed before it says "ready" again.
    setLive(false, true);
  });
})();

// askbridge console: keeps the page live over the event stream, and lets
// the inbox answer in place. The server renders every row and card; this
// only fetches one again when its question changes (stream.js keeps the
// stream open, and the answer controls paused while it is down, so a row
// that may be stale is never offered as answerable; tally.js keeps the
// inbox's counts and its place in the list true), and posts an inbox
// answer with fetch and puts the server's row (or its confirmation step)
// where the row was. Without script every form still posts and the server
// answers with a page.
(function () {
  "use strict";
  var body = document.body;
  var list = document.getElementById("inbox");
  var drafts = window.askbridgeDrafts; // drafts.js, loaded first

  var src = body.getAttribute("data-stream");
  var stream = window.askbridgeStream; // stream.js, loaded on live pages
  if (!src || !window.EventSource || !stream) {
    return;
  }
  // The page's numbers (tally.js): its open count, its place in the
  // list, and what landed on other pages of it.
  var tally = list ? window.askbridgeTally(list) : null;
  var closing = { answered: true, declined: true, timed_out: true, expired: true, cancelled: true };

  function parse(html) {
    var t = document.createElement("template");
    t.innerHTML = html.trim();
    return t.content.firstElementChild;
  }

  function count() {
    if (tally) {
      tally.show();
    }
  }

  // counted moves the open count as a question goes from one state to
  // another; null is a question the page did not know of.
  function counted(was, now) {
    if (tally) {
      tally.counted(was, now);
    }
  }

  // arrivals are the rows inserted since the status region last spoke:
  // a burst of asks is read out once, not cut off row by row.
  var arrivals = [];

  // announce reads out, politely, that row arrived on this page: its
  // kind, whether it is hard to reverse, and its first line.
  function announce(row) {
    var part = function (sel) {
      var el = row.querySelector(sel);
      return el ? el.textContent.trim() : "";
    };
    arrivals.push(part(".kind") + (row.classList.contains("hard") ? ", hard to reverse" : "") + ": " + part(".row-text"));
    if (arrivals.length > 1) {
      return;
    }
    window.setTimeout(function () {
      var region = document.getElementById("arrived");
      if (region) {
        region.textContent = (arrivals.length === 1 ? "New question. " : arrivals.length + " new questions. ") + arrivals.join(". ");
      }
      arrivals = [];
    }, 500);
  }

  // insert places a new row where the API's order puts it.
  function insert(row) {
    stream.pause(row);
    announce(row);
    var rank = row.getAttribute("data-rank");
    var kids = list.children;
    for (var i = 0; i < kids.length; i++) {
      if (kids[i].getAttribute("data-rank") > rank) {
        list.insertBefore(row, kids[i]);
        return;
      }
    }
    list.appendChild(row);
  }

  // pending holds one fetch per element, so a burst of events for one
  // question fetches it once more, not once per event.
  var pending = {};

  function load(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
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
      });
  }

  function refresh(el) {
    var url = el.getAttribute("data-src");
    if (!url || pending[url]) {
      if (url) {
        pending[url] = "again";
      }
      return;
    }
    pending[url] = "busy";
    load(url)
      .then(function (html) {
        if (html === null) {
          return;
        }
        var cur = document.getElementById(el.id);
        if (!cur) {
          // A stub that became a question on another page, fetched
          // again as it changed: it may have closed.
          var qid = el.getAttribute("data-qid");
          if (tally && tally.isAway(qid)) {
            tally.left(qid, html ? parse(html) : null);
          }
          return;
        }
        var was = cur.classList.contains("stub") ? null : cur.getAttribute("data-state");
        if (html === "") {
          if (list && list.contains(cur)) {
            counted(was, "gone");
            cur.remove();
          }
        } else {
          var next = parse(html);
          if (cur.getAttribute("aria-busy") === "true" && !cur.classList.contains("stub")) {
            // An answer from this row is on its way: the server's row
            // after it replaces this one (answered). Drawn now, the copy
            // would lack the parts being answered and show what is being
            // sent as a draft someone else cut off. Fetched again after.
            cur.setAttribute("data-stale", "yes");
            return;
          }
          counted(was, next.getAttribute("data-state"));
          if (cur.classList.contains("stub")) {
            // A question closed as it was asked (a policy rule, a
            // standing approval) never waited on anyone: the open inbox
            // leaves it out. A row that closes while shown stays, with
            // its outcome.
            cur.remove();
            var open = next.getAttribute("data-state") === "open";
            var rank = next.getAttribute("data-rank");
            if (open && tally.fits(rank)) {
              insert(next);
            } else if (open) {
              tally.elsewhere(next.getAttribute("data-qid"), rank);
            } else {
              tally.settle(next.getAttribute("data-qid"));
            }
          } else if (was === "open" && next.hasAttribute("data-at-ask") && list && list.contains(cur)) {
            // Closed as it was asked, but drawn open in the moment
            // between the ask's store and its close: it never waited on
            // anyone, so it leaves the list as it would never have
            // entered it.
            cur.remove();
            tally.settle(next.getAttribute("data-qid"));
          } else {
            drafts.swap(cur, next, stream.pause);
          }
        }
        count();
      })
      .catch(function () {
        // This card may be behind: hold its controls and fetch it again.
        // data-retry keeps them held (stream.js) until a copy is drawn.
        var cur = document.getElementById(el.id);
        if (cur) {
          cur.setAttribute("data-retry", "yes");
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

  // rowURL is where a question's row is fetched, under the page's filters.
  function rowURL(id) {
    var filter = list.getAttribute("data-filter");
    return "/rows/" + encodeURIComponent(id) + (filter ? "?" + filter : "");
  }

  // offPage learns whether a question the page does not show closed.
  function offPage(id) {
    load(rowURL(id)).then(function (html) {
      if (html !== null) {
        tally.left(id, html ? parse(html) : null);
      }
    }).catch(function () {});
  }

  function changed(id, kind) {
    var els = document.querySelectorAll("[data-qid='" + CSS.escape(id) + "'][data-src]");
    for (var i = 0; i < els.length; i++) {
      refresh(els[i]);
    }
    if (els.length > 0 || !list) {
      return;
    }
    if (kind === "asked") {
      // A hidden stub stands in for the new row until it arrives.
      var stub = document.createElement("details");
      stub.id = "card-" + id;
      stub.className = "qrow card stub";
      stub.hidden = true;
      stub.setAttribute("data-qid", id);
      stub.setAttribute("data-src", rowURL(id));
      list.appendChild(stub);
      refresh(stub);
    } else if (closing[kind]) {
      offPage(id);
    }
  }

  // Answering in place: an inbox form posts with fetch and its row is
  // swapped for the server's, which shows what was recorded (or why
  // nothing was); a hard-to-reverse choice first comes back as a
  // confirmation step shown in the row.
  function problemOn(row, text) {
    var host = drafts.hostOf(row);
    var p = row.querySelector(".step-problem");
    if (!p) {
      p = document.createElement("p");
      p.className = "problem-line step-problem";
      p.setAttribute("role", "alert");
      p.tabIndex = -1;
      host.insertBefore(p, host.firstChild);
    }
    p.textContent = text;
    p.focus();
  }

  function enable(row) {
    row.removeAttribute("aria-busy");
    row.querySelectorAll("fieldset").forEach(function (f) {
      f.disabled = row.hasAttribute("data-retry");
    });
    stream.pause(row);
    again(row);
  }

  // again fetches a row whose redraw waited for its answer (refresh).
  function again(row) {
    if (row.getAttribute("data-stale")) {
      row.removeAttribute("data-stale");
      refresh(row);
    }
  }

  // showConfirm shows the confirmation step in place of the row's
  // controls; from names the form whose choice it repeats, and item the
  // one item of it sent alone, if any.
  function showConfirm(row, html, from, item) {
    var section = parse(html);
    section.setAttribute("data-from", from);
    section.setAttribute("data-from-item", item);
    var old = row.querySelector(".confirm-step");
    if (old) {
      old.remove();
    }
    var controls = row.querySelector(".controls");
    if (!controls) {
      return;
    }
    controls.hidden = true;
    controls.parentNode.insertBefore(section, controls);
    enable(row);
    var h = section.querySelector("h2");
    if (h) {
      h.focus();
    }
  }

  function answered(row, html) {
    var asked = row.querySelector(".confirm-step");
    if (asked) {
      asked.remove(); // answered now: it must not come back with the row
    }
    var next = parse(html);
    next.setAttribute("data-src", row.getAttribute("data-src"));
    next.open = true;
    var was = row.getAttribute("data-state");
    counted(was, next.getAttribute("data-state"));
    row.removeAttribute("aria-busy");
    var stale = row.getAttribute("data-stale");
    drafts.swap(row, next, stream.pause);
    if (stale) {
      next.setAttribute("data-stale", stale);
      again(next);
    }
    var note = next.querySelector(".recorded-box, .step-problem");
    if (note) {
      note.focus();
    }
    count();
  }

  function send(row, form, submitter) {
    var id = row.id;
    // The stream may draw the row again while the answer is on its way:
    // act on the row as it is when the answer comes back.
    function current() {
      return document.getElementById(id) || row;
    }
    var data = new FormData(form);
    if (submitter && submitter.name) {
      data.append(submitter.name, submitter.value);
    }
    // "Send only this answer" sends one item of a form: only its fields
    // are sent, and only they stop being a draft.
    var item = submitter && submitter.name === "item" ? submitter.value : "";
    row.setAttribute("aria-busy", "true");
    row.querySelectorAll("fieldset").forEach(function (f) {
      f.disabled = true;
    });
    fetch(form.getAttribute("action"), {
      method: "POST", credentials: "same-origin",
      headers: { "X-Askbridge-Fetch": "row", Accept: "text/html" },
      body: new URLSearchParams(data)
    }).then(function (resp) {
      if (resp.status === 401) {
        window.location.reload();
        return null;
      }
      return resp.text().then(function (html) {
        return { step: resp.headers.get("X-Askbridge-Step"), html: html };
      });
    }).then(function (r) {
      if (r === null) {
        return;
      }
      if (r.step === "confirm") {
        showConfirm(current(), r.html, drafts.formKey(form), item);
        return;
      }
      if (r.step === "recorded" || r.step === "refused") {
        // What was recorded is no draft any more: the form posted, or the
        // one whose choice the confirmation repeated, in the row as it is
        // now. A refusal recorded nothing and the question may still be
        // open (edited arguments not allowed, an item someone answered
        // first), so what was typed stays, to be put right and sent again.
        if (r.step === "recorded") {
          var step = form.closest(".confirm-step");
          var sent = step ? step.getAttribute("data-from") : drafts.formKey(form);
          var part = step ? step.getAttribute("data-from-item") || "" : item;
          current().querySelectorAll("form").forEach(function (f) {
            if (drafts.formKey(f) === sent) {
              drafts.clear(f, part);
            }
          });
        }
        answered(current(), r.html);
        var now = current();
        if (r.step === "recorded" && window.askbridgeKept && now.getAttribute("data-state") !== "open") {
          // Closed by this answer: nothing written for it is a draft now.
          window.askbridgeKept.forget(now.getAttribute("data-qid"), null);
        }
        return;
      }
      var page = parse(r.html.replace(/^[\s\S]*<main>|<\/main>[\s\S]*$/g, ""));
      var msg = page ? page.querySelector("p") : null;
      enable(current());
      problemOn(current(), msg ? msg.textContent : "Not recorded.");
    }).catch(function () {
      enable(current());
      problemOn(current(), "The answer could not be sent (the connection failed), so nothing is known to be recorded. Try again.");
    });
  }

  if (list) {
    list.addEventListener("submit", function (e) {
      var form = e.target;
      var row = form.closest(".qrow");
      if (!row || (form.getAttribute("method") || "").toLowerCase() !== "post") {
        return;
      }
      e.preventDefault();
      send(row, form, e.submitter);
    });
    list.addEventListener("click", function (e) {
      var back = e.target.closest(".confirm-back");
      if (!back) {
        return;
      }
      var row = back.closest(".qrow");
      if (!row) {
        return;
      }
      e.preventDefault();
      back.closest(".confirm-step").remove();
      var controls = row.querySelector(".controls");
      if (controls) {
        controls.hidden = false;
        var first = controls.querySelector("button:not(.enter-guard), textarea, input:not([type=hidden])");
        if (first) {
          first.focus();
        }
      }
    });
  }

  stream.follow(src, function (d) {
    changed(d.question_id, d.kind);
  });
})();

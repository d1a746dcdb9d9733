// askbridge console: a reader's draft outlives their session. A session
// that idles out ends the page's stream, and the page reloads itself to
// the sign-in form (stream.js); an answer posted once it has lapsed is
// refused. Either way what was typed into an answer, a reason or an edit
// of arguments would be gone. So every unsent text is kept in this tab's
// sessionStorage, keyed by its question's id, as it is typed, and put
// back into the same field whenever a page of this tab draws that field
// again: once the person has signed in again, or on the question's page
// after its inbox row. Only the browser holds it (never the server), only
// this tab, and only until the tab closes, the person signs out, the
// server answers its submit, or another account signs in here (who never
// sees it). The Content-Security-Policy is untouched: this is a file of
// this origin like every other script.
(function () {
  "use strict";
  var prefix = "askbridge:draft:";
  var pendingKey = "askbridge:sent";
  var store = null;
  try {
    store = window.sessionStorage;
    store.getItem(pendingKey); // a browser that refuses storage throws here
  } catch (err) {
    store = null;
  }
  var body = document.body;
  // The account signed in: the layout loads this file only for one.
  var who = body.getAttribute("data-who");

  function read(key) {
    try {
      return JSON.parse(store.getItem(key) || "null");
    } catch (err) {
      return null;
    }
  }

  function write(key, val) {
    try {
      store.setItem(key, JSON.stringify(val));
    } catch (err) {
      // Full: this draft stays only on the page, as it did before.
    }
  }

  // field says whether el is a text a person writes into an answer: a
  // text box of a form on a question's card (never the sign-in token,
  // a filter, or a confirmation's hidden copy).
  function field(el) {
    return el && el.id && (el.tagName === "TEXTAREA" || el.tagName === "INPUT" && el.type === "text") &&
      el.form && (el.form.getAttribute("method") || "").toLowerCase() === "post" &&
      !el.closest(".confirm-step") && el.closest("[data-qid]") !== null;
  }

  function qidOf(el) {
    return el.closest("[data-qid]").getAttribute("data-qid");
  }

  // keep records what el holds now for its question: its text while it
  // differs from what the page drew there, else nothing.
  function keep(el) {
    var key = prefix + qidOf(el);
    var rec = read(key) || { who: who, fields: {} };
    if (rec.who !== who) {
      rec = { who: who, fields: {} };
    }
    if (el.value !== el.defaultValue && el.value.trim() !== "") {
      rec.fields[el.id] = el.value;
    } else {
      delete rec.fields[el.id];
    }
    if (Object.keys(rec.fields).length === 0) {
      store.removeItem(key);
    } else {
      write(key, rec);
    }
  }

  // forget drops the kept text of the fields ids of question qid, or all
  // of that question's when ids is null.
  function forget(qid, ids) {
    if (!store) {
      return;
    }
    var key = prefix + qid;
    var rec = read(key);
    if (!rec) {
      return;
    }
    (ids || Object.keys(rec.fields)).forEach(function (id) {
      delete rec.fields[id];
    });
    if (Object.keys(rec.fields).length === 0) {
      store.removeItem(key);
    } else {
      write(key, rec);
    }
  }

  function forgetAll() {
    if (!store) {
      return;
    }
    for (var i = store.length - 1; i >= 0; i--) {
      var k = store.key(i);
      if (k && (k.indexOf(prefix) === 0 || k === pendingKey)) {
        store.removeItem(k);
      }
    }
  }

  // textsOf are the ids of form's text fields that a submit sends: those
  // of the one item a button named, or all of them.
  function textsOf(form, item) {
    var ids = [];
    form.querySelectorAll("textarea, input[type=text]").forEach(function (el) {
      var fs = el.closest("fieldset[data-item]");
      if (field(el) && (!item || fs && fs.getAttribute("data-item") === item)) {
        ids.push(el.id);
      }
    });
    return ids;
  }

  // unsent shows, at the top of the card or row of question qid, the
  // kept texts that no field on it takes any more (the question closed
  // or its part was decided while the person was away), until dismissed,
  // in the box drafts.js (loaded first) shows a redrawn card's lost text
  // in.
  function unsent(host, qid, texts) {
    var ids = Object.keys(texts);
    var box = window.askbridgeDrafts.lostBox(qid, ids, ids.map(function (id) { return texts[id]; }),
      "This question no longer takes what you had written for it here (it was answered or changed meanwhile). It was not sent; it is kept here until you dismiss it.");
    var at = host.querySelector(".row-body") || host;
    at.insertBefore(box, at.firstChild);
  }

  // restored notes, on the card or row, that text was put back, and
  // where, when that is in a fold of the card that is shut (folds: their
  // summaries' words).
  function restored(host, folds) {
    var at = host.querySelector(".row-body") || host;
    var p = document.createElement("p");
    p.className = "note draft-restored";
    p.setAttribute("role", "status");
    p.textContent = "What you were writing here, kept in this tab, is back in its place" +
      (folds.length > 0 ? " (under \u201c" + folds.join("\u201d and \u201c") + "\u201d)" : "") + ". It has not been sent.";
    at.insertBefore(p, at.firstChild);
  }

  // restore puts each kept text back into its field on this page, and
  // unfolds the inbox row that holds it; a fold within the card is left
  // as the person left it, and the note names it. Drafts another account
  // kept in this tab are dropped unseen.
  function restore() {
    for (var i = store.length - 1; i >= 0; i--) {
      var key = store.key(i);
      if (!key || key.indexOf(prefix) !== 0) {
        continue;
      }
      var rec = read(key);
      if (!rec || !rec.fields || rec.who !== who) {
        store.removeItem(key);
        continue;
      }
      var qid = key.slice(prefix.length);
      var host = document.querySelector("[data-qid='" + CSS.escape(qid) + "'].card");
      if (!host) {
        continue; // not on this page: kept for the page that shows it
      }
      var lost = {};
      var back = false;
      var folds = [];
      Object.keys(rec.fields).forEach(function (id) {
        var el = document.getElementById(id);
        if (!el || !host.contains(el) || !field(el)) {
          lost[id] = rec.fields[id];
          return;
        }
        if (el.value === el.defaultValue) {
          el.value = rec.fields[id];
        }
        back = true;
        for (var d = el.closest("details"); d && d !== host; d = d.parentElement.closest("details")) {
          var words = d.querySelector(":scope > summary").textContent.trim();
          if (!d.open && folds.indexOf(words) < 0) {
            folds.push(words);
          }
        }
      });
      if (host.tagName === "DETAILS") {
        host.open = true; // the inbox row
      }
      if (Object.keys(lost).length > 0) {
        unsent(host, qid, lost);
      }
      if (back) {
        restored(host, folds);
      }
    }
  }

  // settle ends a submit that posted as a page, once the server has
  // answered it with its result page (a confirmation still waits for its
  // second submit). Recorded, what it sent is no draft, nor is anything
  // else written for the question if that closed it. Refused, it is put
  // back into the page's card to be put right (restore), and then
  // dropped from the tab: the person has seen what became of it. A page
  // of any other kind (signed out, an expired form) is no answer to it,
  // and the draft stays kept. It returns what to drop once restore has
  // run, or null.
  function settle() {
    var sent = read(pendingKey);
    if (!sent || document.querySelector(".confirm-step form[action='/q/" + CSS.escape(sent.qid) + "/answer']")) {
      return null;
    }
    store.removeItem(pendingKey);
    var card = document.querySelector(".result ~ [data-qid='" + CSS.escape(sent.qid) + "'].card");
    if (!card) {
      return null;
    }
    if (!document.getElementById("recorded")) {
      return sent;
    }
    forget(sent.qid, card.getAttribute("data-state") === "open" ? sent.ids : null);
    return null;
  }

  if (store) {
    var refused = settle();
    restore();
    if (refused) {
      forget(refused.qid, refused.ids);
    }
    document.addEventListener("input", function (e) {
      if (field(e.target)) {
        keep(e.target);
      }
    });
    // A form posted as a page (not in place: console.js prevents those)
    // is noted, so that the page it leads to can tell what was sent.
    document.addEventListener("submit", function (e) {
      var form = e.target;
      if (form.classList.contains("signout")) {
        forgetAll(); // leaving on purpose: nothing of theirs stays in the tab
        return;
      }
      var m = /^\/q\/([^/]+)\/(answer|decline|cancel)$/.exec(form.getAttribute("action") || "");
      if (e.defaultPrevented || !m || form.classList.contains("confirm-form")) {
        return;
      }
      var item = e.submitter && e.submitter.name === "item" ? e.submitter.value : "";
      write(pendingKey, { qid: decodeURIComponent(m[1]), ids: textsOf(form, item) });
    });
  }

  window.askbridgeKept = { forget: forget, textsOf: textsOf };
})();

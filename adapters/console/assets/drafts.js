// askbridge console: a reader's draft outlives the redraws of its card.
// A card is drawn again whenever anyone acts on its question, and
// console.js puts the fresh copy in place through swap, which carries over
// what the reader typed, chose and unfolded, and keeps what the fresh copy
// has no field for in a note until they dismiss it.
(function () {
  "use strict";

  // kept is the tab's store of drafts (kept.js, loaded after this file
  // on a signed-in viewer's pages), or undefined.
  function kept() {
    return window.askbridgeKept;
  }

  // A draft kept from a card closed elsewhere stays until its reader
  // dismisses it, on the page and in the tab's store (kept.js). The
  // keyboard's focus, on the button that goes with it, stays on the card
  // (focusAfter), not thrown back to the top of the page.
  document.addEventListener("click", function (e) {
    var b = e.target.closest ? e.target.closest(".draft-dismiss") : null;
    if (b) {
      var box = b.closest(".draft-box");
      if (box) {
        if (kept() && box.getAttribute("data-kept")) {
          kept().forget(box.getAttribute("data-kept"), (box.getAttribute("data-fields") || "").split(" "));
        }
        var next = box.contains(document.activeElement) ? focusAfter(box) : null;
        box.remove();
        if (next) {
          next.focus();
        }
      }
    }
  });

  // focusAfter is where the keyboard goes when box leaves its card: an inbox
  // row's summary, else the first thing after box on the card that takes
  // focus; null when there is none.
  function focusAfter(box) {
    var card = box.closest("[data-qid]");
    if (!card) {
      return null;
    }
    if (card.tagName === "DETAILS") {
      return card.querySelector(":scope > summary");
    }
    var all = card.querySelectorAll("a[href], button:not([disabled]), input:not([type=hidden]):not([disabled]), textarea:not([disabled]), select:not([disabled]), summary");
    for (var i = 0; i < all.length; i++) {
      if (!box.contains(all[i]) && box.compareDocumentPosition(all[i]) & Node.DOCUMENT_POSITION_FOLLOWING) {
        return all[i];
      }
    }
    return null;
  }

  // formKey names a form alike in a row and in its fresh copy.
  function formKey(f) {
    return [f.getAttribute("action"), f.className, f.getAttribute("data-call"), f.getAttribute("data-item")].join("|");
  }

  // fieldKey names a field alike in a card and in its fresh copy: by id,
  // or else by its form and name (and value, for a choice).
  function fieldKey(f) {
    if (f.id) {
      return "#" + f.id;
    }
    var k = f.form ? formKey(f.form) : "";
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

  // focusKey names an element a keyboard can rest on alike in a card and
  // in its fresh copy: a field as fieldKey does, a button by its form,
  // name, value and class, a fold's summary by its fold (the row's own as
  // such), a link by where it goes; null for anything else.
  function focusKey(el, card) {
    switch (el.tagName) {
      case "INPUT":
      case "TEXTAREA":
      case "SELECT":
        return fieldKey(el);
      case "BUTTON":
        return "button|" + (el.form ? formKey(el.form) : "") + "|" + el.name + "=" + el.value + "|" + el.className;
      case "SUMMARY":
        return "summary|" + (el.parentElement === card ? "" : foldKey(el.parentElement));
      case "A":
        return "a|" + el.getAttribute("href");
    }
    return null;
  }

  // twinOf is the element of card whose focusKey is key, or null.
  function twinOf(key, card) {
    var all = card.querySelectorAll("input, textarea, select, button, summary, a[href]");
    for (var i = 0; i < all.length; i++) {
      if (focusKey(all[i], card) === key) {
        return all[i];
      }
    }
    return null;
  }

  // hostOf is where notes go in a card or row: the top of its body.
  function hostOf(el) {
    return el.querySelector(".row-body") || el.querySelector(".card") || el;
  }

  // lostBox is the box that shows, until its reader dismisses it, the
  // texts they wrote for question qid in the fields ids and did not send,
  // under why. Here it holds what a card drawn afresh has no field for;
  // kept.js shows what a page drawn afresh no longer takes in one too.
  function lostBox(qid, ids, texts, why) {
    var box = document.createElement("div");
    box.className = "draft-box";
    box.setAttribute("role", "status");
    box.setAttribute("data-kept", qid);
    box.setAttribute("data-fields", ids.join(" "));
    var p = document.createElement("p");
    p.textContent = why;
    box.appendChild(p);
    texts.forEach(function (text) {
      var pre = document.createElement("pre");
      pre.className = "draft-text";
      pre.textContent = text;
      box.appendChild(pre);
    });
    var b = document.createElement("button");
    b.type = "button";
    b.className = "draft-dismiss";
    b.textContent = "Dismiss the draft";
    box.appendChild(b);
    return box;
  }

  // keepLost keeps, above the fresh copy, what its reader had written in
  // fields the fresh copy no longer has (the question closed, or the
  // part they were writing for was decided by someone else): it was not
  // sent, and it stays until dismissed.
  function keepLost(lost, ids, next) {
    if (lost.length === 0) {
      return;
    }
    var box = lostBox(next.getAttribute("data-qid") || "", ids, lost,
      "Someone else acted on this question while you were writing. Your draft below was not sent; it is kept here until you dismiss it.");
    var host = hostOf(next);
    host.insertBefore(box, host.firstChild);
    if (next.tagName === "DETAILS") {
      next.open = true;
    }
  }

  // keepDraft carries what the reader has typed or chosen and not sent,
  // the folds they opened and where their caret was, from a card over to
  // its fresh copy. A card is drawn again whenever anyone acts on its
  // question (one call of a batch, a vote), and a half-written reason or
  // edited arguments must not be lost to someone else's click. Text the
  // fresh copy has no field for is kept in a note (keepLost). What the
  // answer given in place left on the row (what was recorded, a pending
  // confirmation, a kept draft) stays too, and so does keyboard focus:
  // on the same element if it was moved over, else on its twin (twinOf),
  // else on the row's summary, never lost to the page's body.
  function keepDraft(cur, next) {
    var active = document.activeElement;
    if (!active || active === cur || !cur.contains(active)) {
      active = null;
    }
    var activeKey = active ? focusKey(active, cur) : null;
    var twins = {};
    next.querySelectorAll("input, textarea").forEach(function (f) {
      twins[fieldKey(f)] = f;
    });
    var focus = null;
    var lost = [];
    var lostIDs = [];
    cur.querySelectorAll("input, textarea").forEach(function (f) {
      if (f.type === "hidden" || f.closest(".confirm-step")) {
        return;
      }
      var twin = twins[fieldKey(f)];
      var typed = f.type !== "radio" && f.type !== "checkbox" && f.value !== f.defaultValue && f.value.trim() !== "";
      if (!twin) {
        if (typed) {
          lost.push(f.value);
          lostIDs.push(f.id);
        }
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
    if (cur.tagName === "DETAILS" && cur.open) {
      next.open = true;
    }
    var host = hostOf(next);
    [".draft-box", ".recorded-box", ".step-problem"].forEach(function (sel) {
      var old = cur.querySelector(sel);
      if (old && !next.querySelector(sel)) {
        host.insertBefore(old, host.firstChild);
      }
    });
    var pendingConfirm = cur.querySelector(".confirm-step");
    var controls = next.querySelector(".controls");
    if (pendingConfirm && controls) {
      controls.hidden = true;
      controls.parentNode.insertBefore(pendingConfirm, controls);
    }
    keepLost(lost, lostIDs, next);
    var summary = next.tagName === "DETAILS" ? next.querySelector(":scope > summary") : null;
    if (!focus && active) {
      var el = next.contains(active) ? active : activeKey !== null ? twinOf(activeKey, next) : null;
      focus = { el: el || summary, from: null };
    }
    if (focus) {
      focus.fallback = summary;
    }
    return focus;
  }

  // swap puts next where cur was, keeping the reader's draft and caret;
  // pause marks its sending controls as the page's state calls for
  // (stream.js).
  function swap(cur, next, pause) {
    pause(next);
    var focus = keepDraft(cur, next);
    cur.replaceWith(next);
    if (!focus) {
      return;
    }
    if (focus.el && !focus.el.matches(":disabled")) {
      focus.el.focus();
      if (focus.from !== null && focus.el.setSelectionRange) {
        focus.el.setSelectionRange(focus.from, focus.to);
      }
    } else if (focus.fallback) {
      focus.fallback.focus(); // its twin is held while the page catches up
    }
  }

  // clear drops what was just recorded from a form, and from the tab's
  // store of drafts (kept.js): all of it, or, when one item of a form was
  // sent alone ("Send only this answer"), that item's fields only, since
  // what was typed or chosen in the form's other items was not sent and
  // is still a draft.
  function clear(form, item) {
    var card = form.closest("[data-qid]");
    if (kept() && card) {
      kept().forget(card.getAttribute("data-qid"), kept().textsOf(form, item));
    }
    if (!item) {
      form.reset();
      return;
    }
    form.querySelectorAll("fieldset[data-item]").forEach(function (fs) {
      if (fs.getAttribute("data-item") !== item) {
        return;
      }
      fs.querySelectorAll("input, textarea").forEach(function (f) {
        if (f.type === "radio" || f.type === "checkbox") {
          f.checked = f.defaultChecked;
        } else if (f.type !== "hidden") {
          f.value = f.defaultValue;
        }
      });
    });
  }

  window.askbridgeDrafts = { swap: swap, hostOf: hostOf, formKey: formKey, clear: clear, lostBox: lostBox };
})();

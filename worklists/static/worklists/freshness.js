// Live blocks: parts of a page that htmx re-fetches every few seconds (a worklist's table,
// a ward's bed board: an element with hx-get and hx-trigger="every …"). The fetch alone
// would not keep these promises, so this script does:
//  - the reader sees how old the shown data is ("updated 3.2 s ago") and, when refreshes
//    fail, that the server cannot be reached (or answered with an error) and how long ago
//    the last update came; the block recovers by itself with the next good answer;
//  - a refresh leaves keyboard focus and the scroll position where they were;
//  - while the server says the views have stopped following the record (a red
//    ".updates-stopped" notice in the answer, data-stopped-ago: seconds, as rendered), the
//    notice's count keeps going between refreshes and screen readers hear it once; the first
//    answer without it removes it ("updates resumed");
//  - only an answer made for the block goes into it. A block naming a response header in
//    data-live-marker takes only answers carrying that header; any block refuses an answer
//    that arrived through a redirect, and 401/403. Such an answer (the login page once the
//    session has ended, an error page) is opened as a page instead, at the block's own
//    address, so the login page's "next" brings the user back to the same list.
// The age is measured with this browser's clock from when the answer arrived: the
// server's clock and the ward computer's may disagree by more than the ages shown.
(function () {
  "use strict";

  var TICK_MS = 200;
  var TIMEOUT_MS = 8000; // a refresh unanswered this long counts as failed
  var REOPEN_GUARD_MS = 30000; // opening the page again within this is a loop: stop instead
  var LIVE = "[hx-get][hx-trigger^='every']";
  var FOCUSABLE = "a[href], button, input, select, textarea, [tabindex]";

  var states = new WeakMap();

  function pageArrivedAt() {
    var nav = window.performance && performance.getEntriesByType &&
      performance.getEntriesByType("navigation")[0];
    return nav && nav.responseEnd > 0 ? performance.timeOrigin + nav.responseEnd : Date.now();
  }

  function isLive(el) {
    return !!(el && el.matches && el.matches(LIVE));
  }

  function stateOf(block) {
    var s = states.get(block);
    if (!s) {
      s = { arrivedAt: pageArrivedAt(), problem: "", status: 0, pending: null, said: "" };
      states.set(block, s);
      block.dataset.receivedAt = String(Math.round(s.arrivedAt));
    }
    return s;
  }

  function intervalMs(block) {
    var m = /every\s+([0-9.]+m?s?)/.exec(block.getAttribute("hx-trigger") || "");
    var ms = m && window.htmx ? htmx.parseInterval(m[1]) : undefined;
    return ms || 2000;
  }

  function ago(seconds) {
    return seconds < 60 ? seconds.toFixed(1) + " s" : Math.round(seconds / 60) + " min";
  }

  function wholeAgo(seconds) {
    return seconds < 60 ? Math.floor(seconds) + " s" : Math.round(seconds / 60) + " min";
  }

  // The block's condition as a word (data-state on the indicator, for styles and print)
  // and as the sentence the reader sees.
  function condition(block, s, age) {
    var last = "last update " + wholeAgo(age) + " ago";
    switch (s.problem) {
      case "unreachable":
        return ["unreachable", "Cannot reach the server — " + last];
      case "silent":
        return ["unreachable", "The server does not answer — " + last];
      case "error":
        return ["error", "The server answered with an error (" + s.status + ") — " + last];
      case "stopped":
        return ["error", "Stopped refreshing: reload the page — " + last];
    }
    if (age * 1000 > 3 * intervalMs(block) + TIMEOUT_MS) {
      return ["stale", "Waiting for the server — " + last];
    }
    return ["ok", "updated " + ago(age) + " ago"];
  }

  // A polite status region beside the block tells screen readers when refreshing fails
  // and when it works again, once each, not every tick.
  function announce(block, s, state) {
    var said = state === "ok" || state === "stale" ? "ok" : state;
    if (said === "ok" && block.querySelector(".updates-stopped")) said = "views-stopped";
    if (said === s.said) return;
    var region = block.previousElementSibling;
    if (!region || !region.classList.contains("live-announcer")) {
      region = document.createElement("p");
      region.className = "live-announcer visually-hidden";
      region.setAttribute("role", "status");
      block.parentNode.insertBefore(region, block);
    }
    if (s.said) {
      region.textContent = said === "views-stopped" ? "Updates have stopped: this page does not show the latest changes."
        : said === "ok" ? (s.said === "views-stopped" ? "Updates resumed: the page is up to date."
          : "The server answers again: the list is up to date.")
        : "The list is not refreshing: " + (s.problem === "error" ? "the server answered with an error."
          : "the server cannot be reached.");
    }
    s.said = said;
  }

  // The notice says how long ago updates stopped: as rendered, plus the time since it arrived.
  function stoppedCount(block, s, now) {
    var notice = block.querySelector(".updates-stopped[data-stopped-ago]");
    var span = notice && notice.querySelector(".stopped-ago");
    if (!span) return;
    var seconds = parseFloat(notice.dataset.stoppedAgo) + Math.max(0, (now - s.arrivedAt) / 1000);
    var text = wholeAgo(seconds);
    if (span.textContent !== text) span.textContent = text;
  }

  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-loaded-at]").forEach(function (el) {
      var block = el.closest(LIVE);
      var span = el.querySelector(".age");
      var state, text;
      if (block) {
        var s = stateOf(block);
        var c = condition(block, s, Math.max(0, (now - s.arrivedAt) / 1000));
        state = c[0];
        text = c[1];
        block.dataset.liveState = state;
        announce(block, s, state);
        stoppedCount(block, s, now);
      } else {
        state = "ok";
        text = "updated " + ago(Math.max(0, now / 1000 - parseFloat(el.dataset.loadedAt))) + " ago";
      }
      el.dataset.state = state;
      if (span && span.textContent !== text) span.textContent = text;
    });
  }

  // ---- which answers go into the block -------------------------------------------------

  function madeFor(block, xhr, requestPath) {
    var marker = block.dataset.liveMarker;
    if (marker) return xhr.getResponseHeader(marker) !== null;
    try {
      var asked = new URL(requestPath, location.href);
      var got = new URL(xhr.responseURL || asked.href);
      return got.pathname === asked.pathname;
    } catch (err) {
      return true;
    }
  }

  function openAsPage(block, s) {
    var url = block.getAttribute("hx-get") || location.href;
    var key = "live-reopened:" + url;
    try {
      var before = parseFloat(sessionStorage.getItem(key) || "0");
      if (Date.now() - before < REOPEN_GUARD_MS) {
        s.problem = "stopped"; // the page itself keeps answering wrongly: don't loop
        return;
      }
      sessionStorage.setItem(key, String(Date.now()));
    } catch (err) { /* no session storage: open the page anyway */ }
    location.assign(url);
  }

  function answered(block) {
    try {
      sessionStorage.removeItem("live-reopened:" + (block.getAttribute("hx-get") || location.href));
    } catch (err) { /* nothing remembered */ }
  }

  // ---- focus and scroll ----------------------------------------------------------------

  function focusKey(el) {
    var form = el.closest("form");
    return [el.tagName, el.getAttribute("href") || "", form ? form.getAttribute("action") || "" : "",
      el.getAttribute("name") || "", (el.textContent || "").trim()].join("\u0001");
  }

  function focusables(block) {
    return Array.prototype.slice.call(block.querySelectorAll(FOCUSABLE));
  }

  function rememberFocus(block) {
    var active = document.activeElement;
    if (!active || active === block || !block.contains(active)) return null;
    var all = focusables(block);
    var key = focusKey(active);
    var nth = 0;
    for (var i = 0; i < all.length && all[i] !== active; i++) {
      if (focusKey(all[i]) === key) nth++;
    }
    return { key: key, nth: nth, position: all.indexOf(active) };
  }

  function restoreFocus(block, kept) {
    if (!kept || (document.activeElement && document.activeElement !== document.body &&
        !block.contains(document.activeElement))) return; // the user moved on meanwhile
    var all = focusables(block);
    var same = all.filter(function (el) { return focusKey(el) === kept.key; });
    // The same link or button; if its row left the list, whatever took its place.
    var target = same[kept.nth] || same[0] || all[Math.min(kept.position, all.length - 1)];
    if (!target) {
      block.setAttribute("tabindex", "-1");
      target = block;
    }
    target.focus({ preventScroll: true });
  }

  function rememberScroll(block) {
    var kept = [[null, window.scrollX, window.scrollY]];
    for (var el = block; el && el !== document.documentElement; el = el.parentElement) {
      if (el.scrollLeft || el.scrollTop) kept.push([el, el.scrollLeft, el.scrollTop]);
    }
    Array.prototype.forEach.call(block.children, function (child, i) {
      if (child.scrollLeft || child.scrollTop) kept.push([i, child.scrollLeft, child.scrollTop]);
    });
    return kept;
  }

  function restoreScroll(block, kept) {
    (kept || []).forEach(function (k) {
      var el = k[0];
      if (el === null) {
        if (window.scrollX !== k[1] || window.scrollY !== k[2]) window.scrollTo(k[1], k[2]);
        return;
      }
      if (typeof el === "number") el = block.children[el];
      if (el) {
        el.scrollLeft = k[1];
        el.scrollTop = k[2];
      }
    });
  }

  // ---- htmx events ---------------------------------------------------------------------

  document.addEventListener("htmx:configRequest", function (e) {
    if (isLive(e.detail.elt) && !e.detail.timeout) e.detail.timeout = TIMEOUT_MS;
  });

  document.addEventListener("htmx:beforeSwap", function (e) {
    var block = e.detail.requestConfig && e.detail.requestConfig.elt;
    if (!isLive(block)) return;
    var xhr = e.detail.xhr;
    var s = stateOf(block);
    if (xhr.status === 401 || xhr.status === 403 ||
        (xhr.status < 400 && !madeFor(block, xhr, e.detail.pathInfo.requestPath))) {
      e.detail.shouldSwap = false;
      e.detail.isError = false;
      openAsPage(block, s);
      return;
    }
    if (xhr.status >= 400) {
      e.detail.shouldSwap = false;
      s.problem = "error";
      s.status = xhr.status;
      return;
    }
    answered(block);
    s.problem = "";
    s.arrivedAt = Date.now();
    block.dataset.receivedAt = String(s.arrivedAt);
    s.pending = e.detail.shouldSwap ? { focus: rememberFocus(block), scroll: rememberScroll(block) } : null;
  });

  document.addEventListener("htmx:afterSwap", function (e) {
    var block = e.detail.requestConfig && e.detail.requestConfig.elt;
    if (!isLive(block)) return;
    var s = stateOf(block);
    if (!s.pending) return;
    restoreFocus(block, s.pending.focus);
    restoreScroll(block, s.pending.scroll);
    tick();
  });

  document.addEventListener("htmx:afterSettle", function (e) {
    var block = e.detail.requestConfig && e.detail.requestConfig.elt;
    if (!isLive(block)) return;
    var s = stateOf(block);
    if (s.pending) restoreScroll(block, s.pending.scroll);
    s.pending = null;
  });

  function failed(problem) {
    return function (e) {
      var block = e.detail.requestConfig && e.detail.requestConfig.elt;
      if (!isLive(block)) return;
      var s = stateOf(block);
      if (s.problem !== "stopped") s.problem = problem;
      tick();
    };
  }
  document.addEventListener("htmx:sendError", failed("unreachable"));
  document.addEventListener("htmx:timeout", failed("silent"));

  document.querySelectorAll(LIVE).forEach(stateOf);
  setInterval(tick, TICK_MS);
  tick();
  document.addEventListener("DOMContentLoaded", tick);
})();

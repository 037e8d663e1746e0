// Idle sessions on shared ward computers (accounts/idle.py is the server's half).
//  - A minute before the server ends an idle session, a warning says so and offers
//    "Stay signed in"; when the time is up the page goes to the login page.
//  - Before warning or leaving, the server is asked how long is left: work in another tab
//    keeps this one alive too.
//  - htmx requests no user event started (the worklists' and bed boards' timed refreshes)
//    are tagged X-Idle-Passive, so an unattended list does not keep a session open.
//  - Typing or clicking with no request (a long form) counts: at most one ping a minute.
(function () {
  "use strict";
  var meta = document.querySelector('meta[name="his-idle"]');
  if (!meta) { return; }
  var warnSeconds = parseInt(meta.dataset.warn, 10) || 60;
  var timeoutMs = (parseInt(meta.dataset.timeout, 10) || 900) * 1000;
  var url = meta.dataset.url;
  var login = meta.dataset.login; // the login page, saying why (accounts/idle.py)
  var csrf = meta.dataset.csrf;
  var deadline = Date.now() + (parseInt(meta.content, 10) || 0) * 1000;
  var lastPing = Date.now();
  var touched = false;
  var box = null;
  var asking = false;

  document.addEventListener("htmx:configRequest", function (e) {
    if (!(e.detail.triggeringEvent instanceof Event)) {
      e.detail.headers["X-Idle-Passive"] = "1";
    } else {
      deadline = Date.now() + timeoutMs; // a request the user caused is activity
    }
  });

  function ask(method) {
    if (asking) { return; }
    asking = true;
    var init = { method: method, credentials: "same-origin", headers: { "Accept": "application/json" } };
    if (method === "POST") { init.headers["X-CSRFToken"] = csrf; }
    fetch(url, init).then(function (r) { return r.json(); }).then(function (body) {
      asking = false;
      if (!body.signed_in) { leave(); return; }
      if (method === "POST") { lastPing = Date.now(); touched = false; }
      deadline = Date.now() + body.remaining * 1000;
      if (body.remaining > warnSeconds) { hide(); }
    }).catch(function () { asking = false; });
  }

  function leave() {
    var next = location.pathname + location.search;
    location.assign(login + "&next=" + encodeURIComponent(next));
  }

  function show(seconds) {
    if (!box) {
      box = document.createElement("div");
      box.id = "idle-warning";
      box.className = "idle-warning";
      box.setAttribute("role", "alertdialog");
      box.setAttribute("aria-live", "assertive");
      box.setAttribute("aria-labelledby", "idle-warning-text");
      var text = document.createElement("p");
      text.id = "idle-warning-text";
      var stay = document.createElement("button");
      stay.type = "button";
      stay.className = "button default";
      stay.id = "idle-stay";
      stay.textContent = "Stay signed in";
      stay.addEventListener("click", function () { ask("POST"); });
      box.appendChild(text);
      box.appendChild(stay);
      document.body.appendChild(box);
      stay.focus();
    }
    box.hidden = false;
    box.querySelector("p").textContent = "You will be signed out in " + seconds +
      " s because nothing was done on this computer. Unsaved work on this page would be lost.";
  }

  function hide() { if (box) { box.hidden = true; } }

  ["keydown", "pointerdown"].forEach(function (name) {
    document.addEventListener(name, function (e) {
      if (box && !box.hidden) { return; } // the warning's own button decides
      touched = true;
      if (Date.now() - lastPing > 60000) { ask("POST"); }
    }, { passive: true });
  });

  setInterval(function () {
    var left = Math.round((deadline - Date.now()) / 1000);
    if (left <= warnSeconds && touched) { ask("POST"); return; }
    if (left <= 0) { ask("GET"); return; }
    if (left <= warnSeconds) {
      if (!box || box.hidden) { ask("GET"); } // another tab may have kept the session alive
      show(Math.max(0, left));
    }
  }, 1000);
}());

// A worklist page's own behaviour, without inline scripts (the Content-Security-Policy
// allows only scripts served by the app):
//  - choosing a filter shows the list at once (select[data-autosubmit]);
//  - the printed header says when the page was printed and how old its data was then
//    ([data-printed-at], [data-data-age]); kept current all the time, because printing
//    (or print emulation) does not always announce itself with "beforeprint".
(function () {
  "use strict";

  var WHEN = { day: "numeric", month: "short", year: "numeric", hour: "2-digit",
    minute: "2-digit", second: "2-digit", hour12: false };
  var TIME = { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false };

  document.addEventListener("change", function (e) {
    var select = e.target;
    if (select.matches && select.matches("select[data-autosubmit]") && select.form) {
      select.form.submit();
    }
  });

  function printLine() {
    var now = new Date();
    document.querySelectorAll("[data-printed-at]").forEach(function (el) {
      el.textContent = now.toLocaleString(undefined, WHEN);
    });
    document.querySelectorAll("[data-data-age]").forEach(function (el) {
      var block = document.getElementById(el.dataset.dataAge);
      var at = block && parseFloat(block.dataset.receivedAt);
      if (!at) return;
      var seconds = Math.max(0, Math.round((now.getTime() - at) / 1000));
      var state = block.dataset.liveState || "ok";
      var text = new Date(at).toLocaleTimeString(undefined, TIME) + " (" +
        (seconds < 120 ? seconds + " s" : Math.round(seconds / 60) + " min") + " before printing" +
        (state === "unreachable" ? "; the server could not be reached since" :
          state === "error" ? "; the server answered with an error since" : "") + ")";
      if (el.textContent !== text) el.textContent = text;
    });
  }

  window.addEventListener("beforeprint", printLine);
  setInterval(printLine, 1000);
  document.addEventListener("DOMContentLoaded", printLine);
})();

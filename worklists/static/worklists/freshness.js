// Shows how old the worklist data is ("updated 3.2 s ago"), ticking between htmx refreshes.
(function () {
  function tick() {
    document.querySelectorAll("[data-loaded-at]").forEach(function (el) {
      var age = Date.now() / 1000 - parseFloat(el.dataset.loadedAt);
      var text = "updated " + (age < 60 ? age.toFixed(1) + " s" : Math.round(age / 60) + " min") + " ago";
      var span = el.querySelector(".age");
      if (span) span.textContent = text;
    });
  }
  setInterval(tick, 200);
  document.addEventListener("DOMContentLoaded", tick);
})();

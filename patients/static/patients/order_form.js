/* Order form: choosing a medication proposes its dose unit and offers only its routes.
   Data: the JSON in #medication-hints ({code: {doseUnit, routes, routeNames, maxSingleDose,
   maxDailyDose}}), written by the page; nothing is fetched. */
(function () {
  "use strict";

  function hasOption(select, value) {
    return Array.prototype.some.call(select.options, function (o) { return o.value === value; });
  }

  function init() {
    var data = document.getElementById("medication-hints");
    var med = document.getElementById("id_medication_code");
    var unit = document.getElementById("id_unit");
    var route = document.getElementById("id_route");
    if (!data || !med || !unit || !route) { return; }
    var hints = JSON.parse(data.textContent);
    var hint = document.createElement("div");
    hint.className = "help";
    hint.id = "medication-hint";
    hint.setAttribute("aria-live", "polite");
    med.parentNode.parentNode.appendChild(hint);

    function apply(onLoad) {
      var h = hints[med.value];
      var allowed = h && h.routes && h.routes.length ? h.routes : null;
      Array.prototype.forEach.call(route.options, function (o) {
        var ok = !o.value || !allowed || allowed.indexOf(o.value) >= 0;
        o.disabled = !ok;
        o.hidden = !ok;
      });
      if (route.value && allowed && allowed.indexOf(route.value) < 0) { route.value = ""; }
      if (!h) { hint.textContent = ""; return; }
      if (!route.value && allowed && allowed.length === 1) { route.value = allowed[0]; }
      if (h.doseUnit && hasOption(unit, h.doseUnit) && !(onLoad && unit.value)) {
        unit.value = h.doseUnit;
      }
      var parts = [];
      if (h.doseUnit) { parts.push("dose in " + h.doseUnit); }
      if (allowed) {
        var names = (h.routeNames || allowed).map(function (n) { return n.toLowerCase(); });
        parts.push("given " + names.join(" or "));
      }
      if (h.maxSingleDose != null) { parts.push("max single dose " + h.maxSingleDose + " " + h.doseUnit); }
      if (h.maxDailyDose != null) { parts.push("max daily dose " + h.maxDailyDose + " " + h.doseUnit); }
      hint.textContent = parts.length ? "Proposed: " + parts.join("; ") + "." : "";
    }

    med.addEventListener("change", function () { apply(false); });
    apply(true);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();

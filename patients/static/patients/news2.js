// The bedside observation form's live NEWS2 (patients/pages/observations.py). The bands are
// the domain's own tables, served in data-news2, so the page and the saved score agree; the
// server scores the set again when it is saved. Without this script the form still works.
document.addEventListener("DOMContentLoaded", () => {
  const live = document.getElementById("news2-live");
  if (!live) return;
  const chart = JSON.parse(live.dataset.news2);
  const form = live.closest("form");
  const PARAMS = ["respiration_rate", "spo2", "air_or_oxygen", "systolic_bp", "pulse",
    "consciousness", "temperature"];
  const FIELD = { air_or_oxygen: "on_oxygen" };
  const number = (name) => {
    const field = form.elements[name];
    const text = field ? String(field.value).trim().replace(",", ".") : "";
    if (text === "") return null;
    const n = Number(text);
    return Number.isFinite(n) ? n : null;
  };
  const band = (v, bands) => {
    for (const [upper, points] of bands) {
      if (upper === "inf" || v <= Number(upper)) return points;
    }
    return null;
  };
  const scores = () => {
    const out = {};
    const choice = form.elements.on_oxygen.value;
    const onOxygen = choice === "" ? null : choice === "oxygen";
    const rr = number("respiration_rate");
    if (rr !== null) out.respiration_rate = band(rr, chart.rr);
    const spo2 = number("spo2");
    if (spo2 !== null) {
      if (chart.scale === 1) out.spo2 = band(spo2, chart.spo2_1);
      else if (spo2 <= 92) out.spo2 = band(spo2, chart.spo2_2_low);
      else if (onOxygen !== null) out.spo2 = onOxygen ? band(spo2, chart.spo2_2_oxygen) : 0;
    }
    if (onOxygen !== null) out.air_or_oxygen = onOxygen ? 2 : 0;
    const systolic = number("systolic_bp");
    if (systolic !== null) out.systolic_bp = band(systolic, chart.systolic);
    const pulse = number("pulse");
    if (pulse !== null) out.pulse = band(pulse, chart.pulse);
    const acvpu = form.elements.consciousness.value;
    if (acvpu) out.consciousness = acvpu === "A" ? 0 : 3;
    const temperature = number("temperature");
    if (temperature !== null) {
      out.temperature = band(Math.round(temperature * 10 + 1e-9) / 10, chart.temperature);
    }
    return out;
  };
  const marks = {};
  PARAMS.forEach((param) => {
    const field = form.elements[FIELD[param] || param];
    if (!field) return;
    const mark = document.createElement("span");
    mark.className = "param-score";
    mark.id = `score-${param}`;
    field.insertAdjacentElement("afterend", mark);
    marks[param] = mark;
  });
  const total = document.getElementById("news2-total");
  const risk = document.getElementById("news2-risk");
  const response = document.getElementById("news2-response");
  const show = () => {
    const got = scores();
    PARAMS.forEach((param) => {
      const mark = marks[param];
      if (!mark) return;
      const s = got[param];
      mark.textContent = s === undefined || s === null ? "" : `score ${s}`;
      mark.className = s === undefined || s === null ? "param-score" : `param-score score-${s}`;
    });
    const present = PARAMS.filter((p) => got[p] !== undefined && got[p] !== null);
    if (present.length < PARAMS.length) {
      total.textContent = `NEWS2: incomplete (${present.length} of 7 parameters)`;
      risk.textContent = "";
      response.textContent = "";
      delete live.dataset.risk;
      return;
    }
    const sum = present.reduce((acc, p) => acc + got[p], 0);
    let level = "low";
    if (sum >= 7) level = "high";
    else if (sum >= 5) level = "medium";
    else if (present.some((p) => got[p] === 3)) level = "low-medium";
    total.textContent = `NEWS2 ${sum} ·`;
    risk.textContent = `${chart.risks[level]} risk`;
    response.textContent = chart.responses[level];
    live.dataset.risk = level;
  };
  form.addEventListener("input", show);
  form.addEventListener("change", show);
  show();
});

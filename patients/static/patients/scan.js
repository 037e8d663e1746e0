// Dose forms' wristband scan (patients/pages/scan.py). A keyboard-wedge scanner types the
// MRN and Enter; Enter here would record the dose before the nurse saw the form, so it only
// says whether the band is this patient's and moves to the Record button. The server checks
// the scan again when the dose is recorded; without this script Enter records it.
document.addEventListener("DOMContentLoaded", () => {
  // The observation form (data-scan="observations") goes on to its first value instead.
  document.querySelectorAll('input[data-scan="dose"], input[data-scan="observations"]').forEach((field) => {
    const said = document.createElement("p");
    said.className = "scan-result";
    said.setAttribute("role", "status");
    field.insertAdjacentElement("afterend", said);
    const tidy = (text) => Array.from(text).filter((c) => c > " " && c !== "\u007f").join("")
      .toUpperCase();
    field.addEventListener("keydown", (event) => {
      if (event.key !== "Enter") return;
      event.preventDefault();
      const scanned = tidy(field.value);
      field.value = scanned;
      const expected = (field.dataset.scanExpect || "").toUpperCase();
      if (!scanned) return;
      if (expected && scanned !== expected) {
        said.textContent = `Wrong patient: this band (${scanned}) is not this patient's (MRN ${expected}).`;
        said.dataset.match = "no";
        field.select();
        return;
      }
      const dose = field.dataset.scan === "dose";
      said.textContent = `Wristband matches: MRN ${scanned}. ${dose ? "Check the dose, then Record." : "Type the observations."}`;
      said.dataset.match = "yes";
      const next = dose ? field.form && field.form.querySelector('input[type="submit"], button[type="submit"]')
        : field.form && field.form.elements.respiration_rate;
      if (next) next.focus();
    });
  });
});

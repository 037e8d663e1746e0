/* Behaviour every admin page shares, in a file: the Content-Security-Policy allows no inline
   script or event handler. */
"use strict";

// A filter choice applies at once: changing a select of a worklist's filter form (or any
// select marked data-autosubmit) submits its form, as clicking "Filter" would.
document.addEventListener("change", (event) => {
  const select = event.target;
  if (!(select instanceof HTMLSelectElement) || !select.form) return;
  if (select.hasAttribute("onchange")) return;  // submits itself
  if (select.matches("#changelist-search select, select[data-autosubmit]")) {
    select.form.requestSubmit();
  }
});

// The print view's "Print" button (no inline script: the Content-Security-Policy forbids it).
document.addEventListener("DOMContentLoaded", () => {
  const button = document.getElementById("print-now");
  if (button) button.addEventListener("click", () => window.print());
});

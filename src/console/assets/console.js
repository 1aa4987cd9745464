// webhook-tasks console: progressive enhancement only; every page works without this script.
"use strict";
(function () {
  // Local time as a tooltip on every UTC timestamp.
  for (const el of document.querySelectorAll("time[datetime]")) {
    const d = new Date(el.getAttribute("datetime"));
    if (!isNaN(d)) el.title = d.toLocaleString();
  }

  // A "select all" box ticks every box of its name.
  for (const all of document.querySelectorAll("input[data-select-all]")) {
    const name = all.getAttribute("data-select-all");
    const boxes = () => document.querySelectorAll('input[type=checkbox][name="' + name + '"]');
    all.addEventListener("change", () => {
      for (const box of boxes()) box.checked = all.checked;
    });
  }

  // Forms that change something big ask first; a form with nothing selected is not sent.
  for (const form of document.querySelectorAll("form")) {
    form.addEventListener("submit", (event) => {
      if (form.classList.contains("selection") && !form.querySelector('input[name="id"]:checked')) {
        event.preventDefault();
        alert("Select the events to replay with their check boxes first.");
        return;
      }
      const question = form.getAttribute("data-confirm");
      if (question && !confirm(question)) {
        event.preventDefault();
        return;
      }
      for (const button of form.querySelectorAll("button[type=submit]")) button.disabled = true;
    });
  }

  // Pages with work still running reload themselves while they are looked at.
  const every = Number(document.body.getAttribute("data-refresh"));
  if (every > 0) {
    const reload = () => {
      if (document.visibilityState === "visible" && !document.querySelector("form :focus")) location.reload();
      else setTimeout(reload, every);
    };
    setTimeout(reload, every);
  }
})();

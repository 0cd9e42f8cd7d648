// Live progress of scoring runs: polls the run's API row once a second until it has finished.
(function () {
  "use strict";
  const labels = { pending: "waiting for a worker", running: "running", succeeded: "finished", failed: "failed" };

  function poll(row) {
    const url = row.dataset.runUrl;
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((response) => (response.ok ? response.json() : Promise.reject(response.status)))
      .then((run) => {
        const bar = row.querySelector(".run-progress");
        bar.max = Math.max(run.progress_total, 1);
        bar.value = run.progress_done;
        row.querySelector(".run-count").textContent = run.progress_done + " / " + run.progress_total;
        const status = row.querySelector(".run-status");
        status.textContent = labels[run.status] || run.status;
        status.className = "run-status status-" + run.status;
        if (run.error) {
          let box = row.querySelector(".run-error");
          if (!box) {
            box = document.createElement("div");
            box.className = "errorlist run-error";
            bar.parentNode.appendChild(box);
          }
          box.textContent = run.error; // textContent: never interpret server text as HTML
        }
        if (run.notes) {
          let notes = row.querySelector(".run-notes");
          if (!notes) {
            notes = document.createElement("div");
            notes.className = "muted run-notes";
            bar.parentNode.appendChild(notes);
          }
          notes.textContent = run.notes;
        }
        if (run.status === "succeeded" || run.status === "failed") {
          row.dataset.finished = "1";
          const report = document.getElementById("report-link");
          if (report) report.hidden = false;
        } else {
          window.setTimeout(() => poll(row), 1000);
        }
      })
      .catch(() => window.setTimeout(() => poll(row), 3000));
  }

  document.querySelectorAll("tr.run").forEach((row) => {
    if (row.dataset.finished !== "1") poll(row);
  });
})();

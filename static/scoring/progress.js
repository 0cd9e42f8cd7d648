// Live progress of scoring runs: polls the run's API row once a second until it has finished.
// Progress counts scores (reply x metric, system x metric), with the time left at the measured rate
// ("estimating…" until a few chunks are done).
(function () {
  "use strict";
  const labels = {
    pending: "waiting for a worker",
    running: "running",
    succeeded: "finished",
    failed: "failed",
    cancelled: "cancelled",
  };
  const finished = new Set(["succeeded", "failed", "cancelled"]);
  const number = new Intl.NumberFormat("en");

  function box(row, className, tag) {
    let element = row.querySelector("." + className.split(" ").pop());
    if (!element) {
      element = document.createElement(tag || "div");
      element.className = className;
      row.querySelector(".run-progress").parentNode.appendChild(element);
    }
    return element;
  }

  function poll(row) {
    const url = row.dataset.runUrl;
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((response) => (response.ok ? response.json() : Promise.reject(response.status)))
      .then((run) => {
        const bar = row.querySelector(".run-progress");
        bar.max = Math.max(run.progress_total, 1);
        bar.value = run.progress_done;
        row.querySelector(".run-count").textContent =
          number.format(run.progress_done) + " of " + number.format(run.progress_total) + " " + run.progress_unit;
        const eta = row.querySelector(".run-eta");
        // the server words it (scoring.selectors.RunProgress.eta_text): "estimating…" until a few chunks are done
        if (eta) eta.textContent = run.eta_text || "";
        const status = row.querySelector(".run-status");
        status.textContent = labels[run.status] || run.status;
        status.className = "run-status status-" + run.status;
        // what the run's LLM judges' endpoints cost so far (scoring/judges/usage.py)
        const usage = row.querySelector(".run-judge-usage");
        if (usage && run.judge_usage) {
          const u = run.judge_usage;
          usage.textContent = "LLM judges' endpoints: " + number.format(u.requests) + " request" +
            (u.requests === 1 ? "" : "s") + ", " + number.format(u.prompt_tokens) + " prompt and " +
            number.format(u.completion_tokens) + " completion tokens";
        }
        // textContent everywhere: never interpret server text as HTML
        if (run.error) box(row, "errorlist run-error").textContent = run.error;
        if (run.notes) box(row, "muted run-notes").textContent = run.notes;
        // a run waiting for a model being trained: "waiting for model X, epoch 3/10"
        const waiting = row.querySelector(".run-waiting");
        if (run.waiting) box(row, "muted run-waiting").textContent = run.waiting;
        else if (waiting) waiting.remove();
        if (finished.has(run.status)) {
          row.dataset.finished = "1";
          const cancel = row.querySelector(".run-cancel");
          if (cancel) cancel.remove();
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

// Progress of an import a worker runs (templates/annotation/data/import_job.html): polls the job's status
// once a second; when the job has finished, the page is loaded again and the server shows the outcome
// (the counts and warnings of the import, or every problem of a rejected one).
(function () {
  "use strict";
  const card = document.getElementById("import-job");
  if (!card || card.dataset.finished === "1") return;
  const number = new Intl.NumberFormat("en");

  function show(job) {
    const bar = document.getElementById("job-progress");
    const count = document.getElementById("job-count");
    const status = document.getElementById("job-status");
    status.textContent = job.status_label; // textContent: server text is never read as HTML
    status.className = "run-status status-" + job.status;
    if (bar) {
      if (job.stage === "checking" || !job.total) {
        bar.removeAttribute("value"); // an indeterminate bar while the rows are checked
      } else {
        bar.max = Math.max(job.total, 1);
        bar.value = job.done;
      }
    }
    if (count) {
      if (job.stage === "checking") count.textContent = job.stage_words + "…";
      else if (job.stage) count.textContent = number.format(job.done) + " of " + number.format(job.total) + " " + job.stage_words;
      else count.textContent = "waiting for a worker…";
    }
  }

  function poll() {
    fetch(card.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((response) => (response.ok ? response.json() : Promise.reject(response.status)))
      .then((job) => {
        if (job.finished) {
          window.location.reload();
          return;
        }
        show(job);
        window.setTimeout(poll, 1000);
      })
      .catch(() => window.setTimeout(poll, 3000));
  }

  poll();
})();

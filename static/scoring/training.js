// Live progress of training jobs: polls GET /api/training-jobs/<id>/ once a second until the job
// has finished. On the job page: the progress bar (epoch i/n, within the epoch by batches), loss and validation
// accuracy, and the training curve drawn with plotly (loss and validation accuracy per epoch, per cell). On the
// study page: each job row's bar and status. Server text is always set with textContent, never as HTML.
(function () {
  "use strict";
  const finished = new Set(["succeeded", "failed", "cancelled"]);
  const labels = {
    pending: "waiting for a worker",
    running: "training",
    succeeded: "trained",
    failed: "failed",
    cancelled: "cancelled",
  };

  function fetchJob(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }).then((response) =>
      response.ok ? response.json() : Promise.reject(response.status)
    );
  }

  // The share of the whole training done: cells x epochs (early stopping may end it sooner).
  function fraction(job) {
    if (job.status === "succeeded") return 1;
    const p = job.progress || {};
    const epochs = p.epochs || 0;
    if (!epochs || !p.epoch) return 0;
    const cells = Math.max(p.cells || 1, 1);
    const cellIndex = Math.max(p.cell_index || 1, 1);
    const within = p.steps ? (p.step || 0) / p.steps : 0;
    const epochDone = p.stage === "epoch" ? 1 : within;
    return Math.min(1, ((cellIndex - 1) * epochs + (p.epoch - 1) + epochDone) / (cells * epochs));
  }

  function figuresText(job) {
    const p = job.progress || {};
    const parts = [];
    if (p.pairs) parts.push(p.pairs.toLocaleString("en") + " training pairs");
    if (typeof p.loss === "number") parts.push("loss " + p.loss.toFixed(4));
    const last = (job.curve || []).filter((point) => !p.cell || point.cell === p.cell).slice(-1)[0];
    const accuracy = typeof p.validation_accuracy === "number" ? p.validation_accuracy : last && last.validation_accuracy;
    if (typeof accuracy === "number") parts.push("validation accuracy " + accuracy.toFixed(4));
    return parts.join(" · ");
  }

  function drawCurve(element, curve) {
    if (!element || !window.Plotly) return;
    const plotted = element.classList.contains("js-plotly-plot");
    if (!curve || !curve.length) {
      if (plotted) window.Plotly.purge(element);
      element.textContent = "The curve appears after the first epoch.";
      return;
    }
    if (!plotted) element.textContent = ""; // the placeholder text; an existing plot is updated in place
    const cells = [...new Set(curve.map((point) => point.cell || ""))];
    const traces = [];
    cells.forEach((cell) => {
      const points = curve.filter((point) => (point.cell || "") === cell);
      const suffix = cell ? " (" + cell + ")" : "";
      traces.push({
        x: points.map((point) => point.epoch),
        y: points.map((point) => point.loss),
        name: "training loss" + suffix,
        mode: "lines+markers",
        yaxis: "y",
      });
      traces.push({
        x: points.map((point) => point.epoch),
        y: points.map((point) => point.validation_accuracy),
        name: "validation accuracy" + suffix,
        mode: "lines+markers",
        line: { dash: "dot" },
        yaxis: "y2",
      });
    });
    const layout = {
      margin: { t: 20, r: 70, b: 50, l: 80 },
      xaxis: { title: { text: "epoch" }, dtick: 1 },
      yaxis: { title: { text: "training loss" }, tickformat: ".4~g", automargin: true },
      yaxis2: {
        title: { text: "validation accuracy" },
        overlaying: "y",
        side: "right",
        range: [0, 1],
        tickformat: ".1f",
        dtick: 0.1,
      },
      legend: { orientation: "h", y: -0.25 },
    };
    window.Plotly.react(element, traces, layout, { displaylogo: false, responsive: true });
  }

  function text(id, value) {
    const element = document.getElementById(id);
    if (element) element.textContent = value;
    return element;
  }

  function showJobPage(section, job) {
    const status = text("job-status", labels[job.status] || job.status);
    status.className = "job-status status-" + job.status;
    text("job-text", job.status_text);
    document.getElementById("job-progress").value = fraction(job);
    text("job-figures", figuresText(job));
    const error = text("job-error", job.error || "");
    error.hidden = !job.error;
    if (job.trained_model) {
      document.getElementById("job-model").hidden = false;
      text("job-model-name", job.trained_model.name);
      text("job-model-hash", job.trained_model.content_hash.slice(0, 12));
    }
    drawCurve(document.getElementById("training-curve"), job.curve);
  }

  function showJobRow(row, job) {
    const status = row.querySelector(".job-status");
    status.textContent = labels[job.status] || job.status;
    status.className = "job-status status-" + job.status;
    row.querySelector(".job-text").textContent = job.status_text;
    const bar = row.querySelector(".job-progress");
    bar.max = 1;
    bar.value = fraction(job);
  }

  function poll(element, show) {
    fetchJob(element.dataset.jobUrl)
      .then((job) => {
        show(element, job);
        if (finished.has(job.status)) {
          element.dataset.finished = "1";
          const cancel = document.getElementById("job-cancel");
          if (cancel && element.id === "training-job") cancel.remove();
          if (element.id === "training-job") dropQueuedMessage();
        } else {
          window.setTimeout(() => poll(element, show), 1000);
        }
      })
      .catch(() => window.setTimeout(() => poll(element, show), 3000));
  }

  // "Training job 3 queued" was true when the page was sent; once the job has ended it is not.
  function dropQueuedMessage() {
    document.querySelectorAll(".messages li.job-queued").forEach((item) => {
      const list = item.parentElement;
      item.remove();
      if (list && !list.children.length) list.remove();
    });
  }

  const section = document.getElementById("training-job");
  if (section) {
    const data = document.getElementById("training-curve-data");
    drawCurve(document.getElementById("training-curve"), data ? JSON.parse(data.textContent) : []);
    if (section.dataset.finished !== "1") poll(section, showJobPage);
    else {
      dropQueuedMessage();
      fetchJob(section.dataset.jobUrl).then((job) => showJobPage(section, job)).catch(() => {});
    }
  }
  document.querySelectorAll("tr.training-job").forEach((row) => {
    if (row.dataset.finished !== "1") poll(row, showJobRow);
  });

  // The training form: show each kind's name lists (BERT-RUBER's cells, MaUde's variants) for that kind
  // only; their boxes name the kind (data-kind, from the trainer registry).
  const form = document.getElementById("training-form");
  if (form) {
    const kind = form.querySelector("select[name=kind]");
    const toggle = () => {
      form.querySelectorAll("fieldset").forEach((box) => {
        const owner = box.querySelector("input[data-kind]");
        if (owner) box.hidden = kind.value !== owner.dataset.kind;
      });
    };
    kind.addEventListener("change", toggle);
    toggle();
  }
})();

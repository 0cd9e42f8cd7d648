// The run form's LLM judges (templates/scoring/_judge_fields.html): the estimate of what the judges ticked
// will cost (GET /api/studies/<id>/judge-estimate/, refreshed when a judge's choice changes), the prompt a
// judge's model reads for one reply (GET /api/studies/<id>/judge-preview/), and that reply's reading,
// computed by a worker (POST to the same address, then GET /api/judge-previews/<id>/ once a second).
// Server text is always set with textContent: never interpreted as HTML.
(function () {
  "use strict";
  const form = document.getElementById("scoring-form");
  const preview = document.getElementById("judge-preview");
  if (!form || !preview) return;
  const estimate = document.getElementById("judge-estimate");
  const number = new Intl.NumberFormat("en", { maximumFractionDigits: 3 });
  const byId = (id) => document.getElementById(id);

  function ticked(name) {
    return Array.from(form.querySelectorAll("input[name='" + name + "']:checked")).map((box) => box.value);
  }

  function chosen(name) {
    const radio = form.querySelector("input[name='" + name + "']:checked");
    if (radio) return radio.value;
    const select = form.querySelector("select[name='" + name + "']");
    return select ? select.value : "";
  }

  function judgeParameters() {
    const parameters = new URLSearchParams();
    for (const [field, name] of [["backend", "judge_backend"], ["model", "judge_model"], ["read", "judge_read"], ["references", "references"]]) {
      const value = chosen(name);
      if (value) parameters.set(field, value);
    }
    return parameters;
  }

  function problems(body) {
    if (!body || typeof body !== "object") return "the server did not answer";
    return Object.entries(body)
      .map(([field, messages]) => (field === "detail" ? "" : field + ": ") + [].concat(messages).join(" "))
      .join("; ");
  }

  function getJson(url, options) {
    return fetch(url, Object.assign({ credentials: "same-origin", headers: { Accept: "application/json" } }, options || {}))
      .then((response) => response.json().catch(() => null).then((body) => ({ ok: response.ok, status: response.status, body: body })));
  }

  // --- the estimate ---------------------------------------------------------------------------------------
  let estimateTimer = null;
  function refreshEstimate() {
    const templates = ticked("judge_templates");
    if (!templates.length) {
      estimate.textContent = "";
      return;
    }
    const parameters = judgeParameters();
    templates.forEach((template) => parameters.append("template", template));
    ticked("judge_questions").forEach((question) => parameters.append("question", question));
    estimate.textContent = "Estimating…";
    getJson(estimate.dataset.url + "?" + parameters).then((answer) => {
      estimate.textContent = answer.ok ? "Estimate: " + answer.body.text : "Estimate: " + problems(answer.body);
    });
  }
  form.addEventListener("change", (event) => {
    const name = event.target.name || "";
    if (name.startsWith("judge_") || name === "references") {
      window.clearTimeout(estimateTimer);
      estimateTimer = window.setTimeout(refreshEstimate, 300);
    }
  });
  refreshEstimate();

  // --- the preview ----------------------------------------------------------------------------------------
  const status = byId("judge-reading-status");

  function previewParameters() {
    const parameters = judgeParameters();
    parameters.set("template", byId("judge-preview-template").value);
    parameters.set("question", byId("judge-preview-question").value);
    parameters.set("position", byId("judge-preview-position").value || "1");
    return parameters;
  }

  function showPrompt(prompt) {
    byId("judge-preview-output").hidden = false;
    byId("judge-preview-item").textContent =
      "Reply " + prompt.position + " of " + prompt.replies + " (id " + prompt.response_id + "), judged as " + prompt.judge + ".";
    byId("judge-prompt-system").textContent = prompt.system;
    byId("judge-prompt-user").textContent = prompt.user;
    byId("judge-prompt-prefix").textContent = prompt.answer_prefix;
    showFormatted(prompt.formatted, prompt.formatted_note);
    byId("judge-reading").hidden = true;
    status.textContent = "";
  }

  function showFormatted(text, note) {
    byId("judge-prompt-formatted-note").textContent = note;
    const formatted = byId("judge-prompt-formatted");
    formatted.hidden = text === null || text === undefined;
    formatted.textContent = text || "";
  }

  function showReading(reading) {
    const body = byId("judge-reading-table").querySelector("tbody");
    body.replaceChildren();
    reading.labels.forEach((label, index) => {
      const row = document.createElement("tr");
      for (const [text, numeric] of [[label, false], [number.format(reading.points[index]), true], [number.format(reading.probabilities[index]), true]]) {
        const cell = document.createElement("td");
        cell.textContent = text;
        if (numeric) cell.className = "num";
        row.appendChild(cell);
      }
      body.appendChild(row);
    });
    const show = (value) => (value === null ? "none" : number.format(value));
    byId("judge-reading-summary").textContent =
      "Expectation " + show(reading.expected) + ", most likely label's point " + show(reading.likeliest) +
      ", mass on the labels " + number.format(reading.mass) + "; a run stores " + show(reading.score) +
      " (" + reading.read + "). Computed in " + number.format(reading.seconds) + " s.";
    if (reading.formatted !== null) showFormatted(reading.formatted, reading.formatted_note);
    byId("judge-reading").hidden = false;
  }

  function follow(url) {
    getJson(url).then((answer) => {
      if (!answer.ok) {
        status.textContent = problems(answer.body);
        return;
      }
      const row = answer.body;
      if (row.status === "done") {
        status.textContent = "";
        showReading(row.reading);
      } else if (row.status === "failed") {
        status.textContent = "The reading failed: " + row.error;
      } else {
        status.textContent = row.status === "running" ? "A worker is reading the reply…" : "Waiting for a worker…";
        window.setTimeout(() => follow(url), 1000);
      }
    }).catch(() => window.setTimeout(() => follow(url), 3000));
  }

  byId("judge-preview-show").addEventListener("click", () => {
    getJson(preview.dataset.promptUrl + "?" + previewParameters()).then((answer) => {
      if (answer.ok) showPrompt(answer.body);
      else {
        byId("judge-preview-output").hidden = false;
        byId("judge-preview-item").textContent = problems(answer.body);
      }
    });
  });

  // Enter in the reply number shows its prompt (and never submits the run form around it)
  byId("judge-preview-position").addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      byId("judge-preview-show").click();
    }
  });

  byId("judge-preview-read").addEventListener("click", () => {
    const body = Object.fromEntries(previewParameters());
    body.position = parseInt(body.position, 10) || 1;
    status.textContent = "Asking a worker…";
    byId("judge-reading").hidden = true;
    getJson(preview.dataset.promptUrl, {
      method: "POST",
      headers: {
        Accept: "application/json",
        "Content-Type": "application/json",
        "X-CSRFToken": form.querySelector("input[name='csrfmiddlewaretoken']").value,
      },
      body: JSON.stringify(body),
    }).then((answer) => {
      if (!answer.ok) status.textContent = problems(answer.body);
      else follow(answer.body.url);
    });
  });
})();

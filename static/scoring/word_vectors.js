// Live progress of word vector conversions: each row of the word vectors page that is not finished polls
// GET /api/word-vectors/<name>/ once a second and shows the status, its text and the bytes read as a bar;
// when it is ready, the dimension, word count and hash. Server text is always set with textContent.
(function () {
  "use strict";
  const finished = new Set(["ready", "failed"]);

  function fraction(entry) {
    if (entry.status === "ready") return 1;
    const p = entry.progress || {};
    return p.total_bytes ? Math.min(1, (p.done_bytes || 0) / p.total_bytes) : 0;
  }

  function show(row, entry) {
    const status = row.querySelector(".job-status");
    status.textContent = entry.status;
    status.className = "job-status status-" + entry.status;
    row.querySelector(".job-text").textContent = entry.status_text;
    const bar = row.querySelector(".job-progress");
    if (bar) {
      bar.value = fraction(entry);
      if (finished.has(entry.status)) bar.remove();
    }
    if (entry.dimension !== null) row.querySelector(".vectors-dimension").textContent = entry.dimension;
    if (entry.words !== null) row.querySelector(".vectors-words").textContent = entry.words;
    if (entry.content_hash) {
      const hash = row.querySelector(".vectors-hash");
      hash.textContent = entry.content_hash.slice(0, 12);
      hash.title = entry.content_hash;
    }
  }

  function poll(row) {
    fetch(row.dataset.jobUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((response) => (response.ok ? response.json() : Promise.reject(response.status)))
      .then((entry) => {
        show(row, entry);
        if (finished.has(entry.status)) row.dataset.finished = "1";
        else window.setTimeout(() => poll(row), 1000);
      })
      .catch((status) => {
        if (status !== 404) window.setTimeout(() => poll(row), 3000); // 404: deleted meanwhile
      });
  }

  document.querySelectorAll("tr.word-vectors-row").forEach((row) => {
    if (row.dataset.finished !== "1") poll(row);
  });
})();

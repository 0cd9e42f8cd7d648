/*
 * The correlation report page: tabs, sortable tables, figures, the rater-pair scatter, and live updates.
 *
 * Figures are built in Python (stats/figures/report.py) and fetched as plotly figure dicts from the
 * figures endpoint; this script only renders them. Scatter plots carry an item index in customdata and
 * the reply texts come once, in `texts`: they are escaped here and attached as hover text. Plotly reads
 * a few HTML-like tags in hover labels and titles, and reply texts are written by dialog systems and
 * imported files, so every outside string is escaped (&, <, >) before it reaches Plotly.
 *
 * Live updates: the page polls the status endpoint; when a report for newer data is ready it fetches the
 * report body again and swaps it in, keeping the tab that is open. A report not computed yet is never
 * computed while the page loads: the page shows a progress bar (or the previous report marked as
 * updating) and, for a small study, asks for it with a POST of its own. Without JavaScript every section is
 * shown one after another and the page still works (reload to update).
 */
(function () {
  "use strict";

  var POLL_MS = 4000;
  var FAST_POLL_MS = 700; // while a report is being computed: its progress bar moves
  var computing = false;
  var body = document.getElementById("report-body");
  if (!body) { return; }
  document.documentElement.classList.add("js");
  var activeTab = (location.hash || "").replace("#tab-", "") || "metrics";
  var raters = [];

  function escapeText(value) {
    return String(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  // --- tabs -------------------------------------------------------------------------------------------
  function showTab(name) {
    var sections = body.querySelectorAll("section.tab");
    var found = false;
    sections.forEach(function (section) { if (section.dataset.tab === name) { found = true; } });
    if (!found && sections.length) { name = sections[0].dataset.tab; }
    activeTab = name;
    sections.forEach(function (section) { section.classList.toggle("active", section.dataset.tab === name); });
    body.querySelectorAll("#report-tabs a").forEach(function (link) {
      link.classList.toggle("active", link.dataset.tab === name);
    });
    // Plotly cannot size a plot inside a hidden element: resize the ones that just became visible.
    body.querySelectorAll("section.tab.active .js-plotly-plot").forEach(function (div) {
      if (window.Plotly) { Plotly.Plots.resize(div); }
    });
  }

  function initTabs() {
    body.querySelectorAll("#report-tabs a").forEach(function (link) {
      link.addEventListener("click", function (event) {
        event.preventDefault();
        history.replaceState(null, "", "#tab-" + link.dataset.tab);
        showTab(link.dataset.tab);
      });
    });
    showTab(activeTab);
  }

  // --- sortable tables ----------------------------------------------------------------------------------
  function makeSortable(table) {
    var headers = table.querySelectorAll("thead th");
    var sortBody = table.tBodies[table.tBodies.length - 1]; // human rows stay in their own tbody, on top
    headers.forEach(function (header, column) {
      header.style.cursor = "pointer";
      header.title = "sort";
      header.addEventListener("click", function () {
        var ascending = header.dataset.order !== "asc";
        headers.forEach(function (other) { delete other.dataset.order; });
        header.dataset.order = ascending ? "asc" : "desc";
        var rows = Array.prototype.slice.call(sortBody.rows);
        rows.sort(function (a, b) {
          var left = a.cells[column] ? a.cells[column].dataset.sort : "";
          var right = b.cells[column] ? b.cells[column].dataset.sort : "";
          if (left === undefined) { left = a.cells[column].textContent; }
          if (right === undefined) { right = b.cells[column].textContent; }
          if (left === "" || right === "") { return (left === "") - (right === ""); } // empty last
          var diff = (!isNaN(left) && !isNaN(right)) ? Number(left) - Number(right) : left.localeCompare(right);
          return ascending ? diff : -diff;
        });
        rows.forEach(function (row) { sortBody.appendChild(row); });
      });
    });
  }

  // --- figures ----------------------------------------------------------------------------------------
  // Reply texts come once per question, already escaped by the server (stats/figures/report.py): a figure
  // that shows them has the reply's index in customdata[i][0] and "%{text}" in its hover template.
  function withHoverTexts(spec, texts) {
    var figure = spec.figure;
    if (!spec.uses_reply_text) { return figure; }
    (figure.data || []).forEach(function (trace) {
      if (!trace.customdata) { return; }
      trace.text = trace.customdata.map(function (entry) {
        var text = texts[Array.isArray(entry) ? entry[0] : entry];
        return text === undefined ? "" : text;
      });
    });
    return figure;
  }

  function imageLinks(spec, query) {
    var links = document.createElement("p");
    links.className = "muted small figure-links";
    var base = body.dataset.figuresUrl.split("figures.json")[0] + "figures/" + spec.name;
    ["png", "svg"].forEach(function (format, index) {
      if (index) { links.appendChild(document.createTextNode(" · ")); }
      var link = document.createElement("a");
      link.href = base + "." + format + "?" + query;
      link.textContent = format.toUpperCase();
      link.setAttribute("download", spec.filename + "." + format);
      links.appendChild(link);
    });
    return links;
  }

  function draw(div, spec, texts) {
    var figure = withHoverTexts(spec, texts);
    var config = {
      responsive: true,
      displaylogo: false,
      toImageButtonOptions: { filename: spec.filename, format: "png", scale: 2 },
    };
    Plotly.newPlot(div, figure.data || [], figure.layout || {}, config);
    div.dataset.drawn = spec.name;
  }

  function drawFigures(payload) {
    var query = body.dataset.figuresUrl.split("?")[1] || "";
    var byName = {};
    payload.figures.forEach(function (spec) { byName[spec.name] = spec; });
    body.querySelectorAll("div.plot[data-figure]").forEach(function (div) {
      var spec = byName[div.dataset.figure];
      if (!spec) { div.closest(".card").classList.add("no-figure"); return; }
      draw(div, spec, payload.texts);
      div.parentNode.appendChild(imageLinks(spec, query));
    });
    // Cards first, plots after: a plot drawn before the grid has all of its cards takes the width of a
    // lone card and keeps it.
    var pending = [];
    body.querySelectorAll("[data-figure-group]").forEach(function (group) {
      payload.figures.forEach(function (spec) {
        if (spec.name.indexOf(group.dataset.figureGroup) !== 0) { return; }
        var card = document.createElement("div");
        card.className = "card";
        var div = document.createElement("div");
        div.className = "plot";
        div.dataset.figure = spec.name;
        card.appendChild(div);
        group.appendChild(card);
        pending.push([div, spec, card]);
      });
    });
    pending.forEach(function (entry) {
      draw(entry[0], entry[1], payload.texts);
      entry[2].appendChild(imageLinks(entry[1], query));
    });
    var heatmap = body.querySelector('div.plot[data-figure="agreement-heatmap"]');
    if (heatmap && heatmap.on) {
      heatmap.on("plotly_click", function (event) {
        var point = event.points && event.points[0];
        if (point && point.pointIndex) { drawPair(point.pointIndex[0], point.pointIndex[1]); }
      });
      drawPair(0, 1); // a pair from the start, not an empty card until a click
    } else {
      var pairCard = document.getElementById("pair-plot");
      if (pairCard) { pairCard.closest(".card").classList.add("no-figure"); }
    }
  }

  function loadFigures() {
    if (!window.Plotly || !body.querySelector("#report-tabs")) { return; }
    var state = document.getElementById("report-state");
    var url = body.dataset.figuresUrl + (state && state.dataset.version ? "&version=" + state.dataset.version : "");
    fetch(url, { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (payload) {
        if (!payload) { return; }
        raters = payload.raters || [];
        drawFigures(payload);
        showTab(activeTab);
      });
  }

  // The scatter of two raters over the replies both rated (a click on heat map cell [row, column]; the
  // heat map's raters are in the order of `raters`), jittered like RUBER's figures.
  function drawPair(row, column) {
    var target = document.getElementById("pair-plot");
    var a = raters[row], b = raters[column];
    if (!target || !a || !b || a === b) { return; }
    var valuesB = {};
    b.items.forEach(function (item, index) { valuesB[item] = b.values[index]; });
    var x = [], y = [];
    var seed = 7;
    function noise() { // a small seeded generator: the same cloud on every click
      seed = (seed * 16807) % 2147483647;
      var u = seed / 2147483647, v = ((seed * 16807) % 2147483647) / 2147483647;
      return 0.15 * Math.sqrt(-2 * Math.log(u + 1e-12)) * Math.cos(2 * Math.PI * v);
    }
    a.items.forEach(function (item, index) {
      if (valuesB[item] === undefined) { return; }
      x.push(a.values[index] + noise());
      y.push(valuesB[item] + noise());
    });
    Plotly.newPlot(target, [{
      type: "scatter", mode: "markers", x: x, y: y,
      marker: { size: 6, opacity: 0.55, color: "#2d5bd7" },
      hovertemplate: escapeText(a.annotator) + ": %{x:.0f}<br>" + escapeText(b.annotator) + ": %{y:.0f}<extra></extra>",
    }], {
      title: { text: escapeText(a.annotator) + " vs " + escapeText(b.annotator) + " (" + x.length + " shared replies)", font: { size: 14 } },
      xaxis: { title: { text: escapeText(a.annotator) + " (jittered)" } },
      yaxis: { title: { text: escapeText(b.annotator) + " (jittered)" } },
      height: 420, margin: { l: 60, r: 20, t: 60, b: 50 },
    }, { responsive: true, displaylogo: false });
    target.dataset.pair = a.annotator + "|" + b.annotator;
  }

  // --- live updates -----------------------------------------------------------------------------------
  function currentVersion() {
    var state = document.getElementById("report-state");
    return state ? state.dataset.version : "";
  }

  function poll() {
    fetch(body.dataset.statusUrl, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (status) {
        if (!status) { return; }
        var bar = document.getElementById("report-progress");
        if (bar) { bar.value = status.progress; }
        var stage = document.getElementById("report-stage");
        if (stage) { stage.textContent = status.stage || ""; }
        var preparing = document.getElementById("bundle-status");
        var bundleDone = preparing && status.bundle && (status.bundle.status === "ready" || status.bundle.status === "failed");
        var changed = status.shown_version !== null && String(status.shown_version) !== currentVersion();
        if (bundleDone) { return refresh(); }
        var failedNow = status.status === "failed" && !document.getElementById("report-failed");
        var updating = document.getElementById("report-updating");
        // Data changed under a report that looked fresh: show it marked as updating (and, for a small
        // study, ask for the new one: the refreshed card carries the compute form).
        var staleNow = !status.fresh && status.status !== "failed" && !updating;
        if (changed || failedNow || staleNow || (status.fresh && updating)) {
          return refresh();
        }
      })
      .catch(function () { /* the server is restarting: try again at the next tick */ })
      .then(function () {
        setTimeout(poll, computing || document.getElementById("report-updating") ? FAST_POLL_MS : POLL_MS);
      });
  }

  function refresh() {
    return fetch(body.dataset.fragmentUrl, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (html === null) { return; }
        body.innerHTML = html;
        init();
        body.dispatchEvent(new CustomEvent("report:updated", { bubbles: true }));
      });
  }

  // A small study's report is computed by this page's own request (correlation/report/cache.py), once
  // per data version; the poll shows its progress meanwhile and the report comes in when it returns.
  var computeAsked = null;
  function requestCompute() {
    var form = document.getElementById("report-compute");
    if (!form || computeAsked === form.action + currentVersion()) { return; }
    computeAsked = form.action + currentVersion();
    computing = true;
    fetch(form.action, {
      method: "POST", body: new FormData(form), credentials: "same-origin", headers: { Accept: "application/json" },
    })
      .catch(function () { return null; })
      .then(function () { computing = false; return refresh(); });
  }

  function init() {
    body.querySelectorAll("table.sortable").forEach(makeSortable);
    initTabs();
    loadFigures();
    requestCompute();
  }

  init();
  setTimeout(poll, document.getElementById("report-updating") ? FAST_POLL_MS : POLL_MS);
})();

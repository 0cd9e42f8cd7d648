/*
 * Draws the correlation report's scatter plots from the one JSON blob the page embeds
 * (id "correlation-plot-data", written by correlation/plots.py through Django's json_script),
 * and makes tables with class "sortable" sortable by clicking a header.
 *
 * Every string that reaches Plotly is escaped first: Plotly reads a few HTML-like tags in titles and
 * hover labels, and response texts are written by dialog systems and imported files, not by us.
 * Without "<" there is no tag to read; Plotly turns &amp; &lt; &gt; back into text (it does not know
 * &quot;, so quotes are left as they are).
 */
(function () {
  "use strict";

  var PALETTE = [
    "#2d5bd7", "#d9822b", "#1f8a4c", "#c0392b", "#8e44ad",
    "#16a2b8", "#7f6a00", "#e84393", "#5d6778", "#00a676",
  ];

  function escapeText(value) {
    return String(value)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;");
  }

  function formatCoefficient(value) {
    return value === null || value === undefined ? "n/a" : value.toFixed(3);
  }

  function plotTitle(entry) {
    return escapeText(entry.metric) + " (" + escapeText(entry.references) + ")<br>" +
      "r = " + formatCoefficient(entry.pearson) + ", ρ = " + formatCoefficient(entry.spearman);
  }

  function baseLayout(entry, xTitle, yTitle) {
    return {
      title: { text: plotTitle(entry), font: { size: 14 } },
      xaxis: { title: { text: xTitle }, zeroline: false },
      yaxis: { title: { text: yTitle }, zeroline: false },
      margin: { l: 60, r: 20, t: 60, b: 40 },
      height: 420,
      hovermode: "closest",
      legend: { orientation: "h", y: -0.28, yanchor: "top", font: { size: 11 } },
    };
  }

  // One trace per system so that the legend colours points by system.
  function utteranceTraces(data, entry) {
    var items = data.items;
    var traces = data.systems.map(function (name, index) {
      return {
        type: "scatter",
        mode: "markers",
        name: escapeText(name),
        x: [], y: [], customdata: [],
        marker: { color: PALETTE[index % PALETTE.length], size: 6, opacity: 0.6 },
        hovertemplate: "%{customdata[0]}<br>system: " + escapeText(name) +
          "<br>human: %{customdata[1]}<br>metric: %{y:.4f}<extra></extra>",
      };
    });
    for (var i = 0; i < items.x.length; i++) {
      var value = entry.values[i];
      if (value === null) { continue; }
      var trace = traces[items.system[i]];
      trace.x.push(items.x[i]);
      trace.y.push(value);
      trace.customdata.push([escapeText(items.text[i]), items.human[i]]);
    }
    return traces.filter(function (trace) { return trace.x.length > 0; });
  }

  function systemTraces(data, entry) {
    return entry.systems.map(function (name, index) {
      var colour = PALETTE[Math.max(0, data.systems.indexOf(name)) % PALETTE.length];
      return {
        type: "scatter",
        mode: "markers+text",
        name: escapeText(name),
        x: [entry.human[index]],
        y: [entry.values[index]],
        text: [escapeText(name)],
        textposition: "top center",
        marker: { color: colour, size: 12 },
        hovertemplate: escapeText(name) + "<br>mean human: %{x:.3f}<br>mean metric: %{y:.4f}<br>responses: " +
          entry.sizes[index] + "<extra></extra>",
      };
    });
  }

  function drawPlots(data) {
    var byLevel = { utterance: {}, system: {} };
    data.metrics.forEach(function (entry) { byLevel.utterance[entry.signature] = entry; });
    data.system_level.forEach(function (entry) { byLevel.system[entry.signature] = entry; });
    var config = { responsive: true, displaylogo: false };
    document.querySelectorAll("div.plot[data-metric]").forEach(function (div) {
      if (div.dataset.level === "system-metric") { return; } // drawn by drawSystemMetricPlots
      var level = div.dataset.level === "system" ? "system" : "utterance";
      var entry = byLevel[level][div.dataset.metric];
      if (!entry) { return; }
      if (level === "system") {
        Plotly.newPlot(div, systemTraces(data, entry),
          baseLayout(entry, "mean human score", "mean " + escapeText(entry.metric)), config);
      } else {
        Plotly.newPlot(div, utteranceTraces(data, entry),
          baseLayout(entry, "human score (jittered)", escapeText(entry.metric)), config);
      }
    });
  }

  function makeSortable(table) {
    var headers = table.querySelectorAll("thead th");
    headers.forEach(function (header, column) {
      header.style.cursor = "pointer";
      header.title = "sort";
      header.addEventListener("click", function () {
        var ascending = header.dataset.order !== "asc";
        headers.forEach(function (other) { delete other.dataset.order; });
        header.dataset.order = ascending ? "asc" : "desc";
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var left = a.cells[column].dataset.sort;
          var right = b.cells[column].dataset.sort;
          if (left === undefined) { left = a.cells[column].textContent; }
          if (right === undefined) { right = b.cells[column].textContent; }
          if (left === "" || right === "") { return (left === "") - (right === ""); } // empty last
          var diff = (!isNaN(left) && !isNaN(right)) ? Number(left) - Number(right) : left.localeCompare(right);
          return ascending ? diff : -diff;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  // System-level metrics (diversity, recall, corpus BLEU): one bar per system.
  function drawSystemMetricPlots(data) {
    var bySignature = {};
    data.metrics.forEach(function (entry) { bySignature[entry.signature] = entry; });
    var systems = data.systems.map(escapeText);
    document.querySelectorAll('div.plot[data-level="system-metric"]').forEach(function (div) {
      var entry = bySignature[div.dataset.metric];
      if (!entry) { return; }
      var trace = {
        type: "bar", x: systems, y: entry.values,
        text: entry.items.map(function (n) { return "n=" + n; }), hoverinfo: "x+y+text"
      };
      var layout = {
        title: { text: escapeText(entry.metric), font: { size: 14 } },
        margin: { t: 40, r: 10, b: 60, l: 50 }, height: 280,
        yaxis: { title: { text: escapeText(entry.metric) } }
      };
      Plotly.newPlot(div, [trace], layout, { responsive: true, displaylogo: false });
    });
  }

  document.querySelectorAll("table.sortable").forEach(makeSortable);
  var blob = document.getElementById("correlation-plot-data");
  if (blob && typeof Plotly !== "undefined") {
    drawPlots(JSON.parse(blob.textContent));
  }
  var systemBlob = document.getElementById("system-metric-data");
  if (systemBlob && typeof Plotly !== "undefined") {
    drawSystemMetricPlots(JSON.parse(systemBlob.textContent));
  }
})();

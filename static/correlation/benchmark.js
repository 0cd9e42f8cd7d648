// The benchmark page's heat map (stats/benchmark/figure.py builds the figure; its texts are escaped there).
(function () {
  "use strict";
  const data = document.getElementById("benchmark-figure-data");
  const target = document.getElementById("benchmark-heatmap");
  if (!data || !target || typeof Plotly === "undefined") return;
  const figure = JSON.parse(data.textContent);
  Plotly.newPlot(target, figure.data || [], figure.layout || {}, { responsive: true, displaylogo: false });
  target.dataset.ready = "1";
})();

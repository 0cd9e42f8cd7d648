// The benchmark page's heat map (stats/benchmark/figure.py builds the figure; its texts are escaped there).
(function () {
  "use strict";
  const data = document.getElementById("benchmark-figure-data");
  const target = document.getElementById("benchmark-heatmap");
  if (!data || !target || typeof Plotly === "undefined") return;
  const figure = JSON.parse(data.textContent);
  // Not responsive: the figure's width and height follow its studies and metrics, not the window (a
  // stretched plot drew two studies as two thin columns across the card); a wider one scrolls in its box.
  Plotly.newPlot(target, figure.data || [], figure.layout || {}, { responsive: false, displaylogo: false });
  target.dataset.ready = "1";
})();

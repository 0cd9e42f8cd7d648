/*
 * The conversation page: draws the per-turn score curve. The figure is built in Python
 * (stats/figures/conversations.py, every outside string already escaped for plotly) and embedded
 * in the page as JSON (Django's json_script); this script only renders it. Without JavaScript the
 * table of turns under the plot still holds every score.
 */
(function () {
  "use strict";

  var data = document.getElementById("turn-figure");
  var div = document.getElementById("turn-plot");
  if (!data || !div || !window.Plotly) { return; }
  var figure = JSON.parse(data.textContent);
  Plotly.newPlot(div, figure.data || [], figure.layout || {}, {
    responsive: true,
    displaylogo: false,
    toImageButtonOptions: { filename: div.dataset.filename || "turn-scores", format: "png", scale: 2 },
  });
})();

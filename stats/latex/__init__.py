"""The report's tables as LaTeX, in the layout of the papers the app reproduces, ready to paste.

* :func:`correlation_table_latex`: Tao et al. (2018), RUBER, Table 2: an "Inter-annotator" block with Human (Avg)
  and Human (Max) above the metric blocks Referenced, Unreferenced, Hybrid, LLM judge, Other (always in this order;
  a block the document does not know comes last); one column per coefficient, "Pearson ($p$-value)" and
  "Spearman ($p$-value)" (Kendall's tau on request), each cell ``0.2722 ($< 0.01$)``.
* :func:`single_vs_multi_latex`: Gupta et al. (2019), Table 4: each referenced metric with one reference and with all
  of them, Spearman, $p$-value, Pearson, $p$-value for each.
* :func:`diversity_latex`: Gupta et al. (2019), Table 5: diversity metrics against the raters' diversity scores.
* :func:`report_latex`: every table of every question, under a comment header naming the study, the data
  and code versions and the report options.

Number rules (each table's caption repeats its $p$-value rule):

* coefficients: 4 decimals, as both papers print them (``-0.0006``; a rounded ``-0.0000`` is ``0.0000``);
* $p$-values in Tao et al.'s layout: 4 decimals in parentheses, and ``$< 0.01$`` below 0.01, as Table 2
  prints them; in Gupta et al.'s layouts (own columns): 3 decimals, and ``$< 0.001$`` below 0.001, where the
  paper printed ``0.000``;
* a statistic the report could not compute (``None``; the row's note says why) is ``n/a``; a column that
  does not apply to a row (Kendall's tau for the human rows, which the report does not compute) is
  ``---``;
* bold: the highest coefficient per column among the metric rows (the human rows are the ceiling, not
  competitors), compared as printed (4 decimals), so equal-looking values are bold together; nothing is
  bold when fewer than two metrics have a value in that column.

Metric names read as in the papers (``bleu-2`` -> BLEU-2, ``ruber-referenced`` -> Vector pool ($s_R$));
a name the app does not know is printed as it is, escaped. A metric whose scores were computed elsewhere
and imported (``origin`` external) is printed with its name and a dagger
(``BLEU-2$^\\dagger$``), in the block External, and the caption says what the dagger means. When one
metric was scored with one reference and with all of them, its rows say which (``BLEU-2 (single)``,
``BLEU-2 (multi)``); when two signatures of a metric still read the same (two tokenizers, two models),
the parts of the signature that differ are added. Every text from outside (study, question, metric and
block names, notes, the filter's description) goes through :func:`latex_escape`.

The tables need only ``\\usepackage{booktabs}`` (a block's name stands in its first row, no ``multirow``,
so nothing beyond what an ACL or IEEE template loads). The correlation and single- vs
multi-reference tables are ``table*`` (as wide as the page in a two-column paper such as both of these, an
ordinary float in one column), all three in ``\\small``.

The package: ``cells.py`` (text and numbers), ``labels.py`` (metric names, row order and labels),
``captions.py``, one module per table family (``correlation_table.py``, ``reference_tables.py``) and
``report.py`` (every table of a report).

Pure Python: no Django here (import-linter contract).
"""

from __future__ import annotations

from stats.latex.captions import EXTERNAL_NOTE, IMPLEMENTATION_DESCRIPTIONS
from stats.latex.cells import (
    NOT_APPLICABLE,
    NOT_AVAILABLE,
    PACKAGES,
    format_coefficient,
    format_p_value,
    latex_escape,
)
from stats.latex.correlation_table import HUMAN_LABELS, INTER_ANNOTATOR, correlation_table_latex
from stats.latex.labels import EXTERNAL_MARK, METRIC_ORDER, metric_label
from stats.latex.reference_tables import diversity_latex, single_vs_multi_latex
from stats.latex.report import report_latex
from stats.report.types import GROUP_ORDER

__all__ = [
    "EXTERNAL_MARK",
    "EXTERNAL_NOTE",
    "GROUP_ORDER",
    "HUMAN_LABELS",
    "IMPLEMENTATION_DESCRIPTIONS",
    "INTER_ANNOTATOR",
    "METRIC_ORDER",
    "NOT_APPLICABLE",
    "NOT_AVAILABLE",
    "PACKAGES",
    "correlation_table_latex",
    "diversity_latex",
    "format_coefficient",
    "format_p_value",
    "latex_escape",
    "metric_label",
    "report_latex",
    "single_vs_multi_latex",
]

"""A benchmark across studies: metric x study tables of one statistic, as Yeh et al. (2021) assembled
by hand for 23 metrics x 10 dialog datasets.

* stats/benchmark/options.py: what the researcher picks (statistic, grouping), parsed with clear messages;
* stats/benchmark/cells.py: one study's column: the statistic of every metric with its significance;
* stats/benchmark/table.py: the columns side by side, the mean and mean rank per metric, the best per column;
* stats/benchmark/judges.py: LLM judges matched across studies by template, model and reading, not by their
  study's question;
* stats/benchmark/formats.py: the table as text, JSON and LaTeX (booktabs, as the report's tables);
* stats/benchmark/figure.py: the heat map.

Pure numpy/scipy: no Django here (import-linter contract).
"""

"""The correlation report as a pure function of its inputs (stats.report.builder) and its parts."""

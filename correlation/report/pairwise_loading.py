"""Reads a study's pairwise judgments for the report, as the pure records the win-rate statistics take
(stats/pairwise.py); the reading itself is annotation/selectors/pairwise_records.py, which scoring's
pairwise judges read too."""

from annotation.selectors.pairwise_records import study_pairwise_records as study_pairwise_records

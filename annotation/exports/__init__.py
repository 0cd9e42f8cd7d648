"""A study's annotations as files (ratings, collected references, diversity and pairwise judgments, CSV or JSON
Lines): the writers, the study page's download links and the export API."""

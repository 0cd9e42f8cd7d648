"""The researcher's annotation page: progress, annotators' quality, attention checks, settings, the invite link,
per-annotator decisions and the qualification round's training items; the progress API."""

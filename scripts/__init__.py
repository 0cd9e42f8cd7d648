"""Project scripts: set-up, local run, test run, and the WordNet data builder they share."""

"""The conversation pages (a study imported as conversations-jsonl): every conversation's per-turn curve and
dialog-level score, the per-system table, and the reads behind them."""

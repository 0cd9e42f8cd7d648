"""The volunteer's work, mounted at /work/: the item pages of every task (rate, write, diversity, pair), back and
skip, notes on an item, their own history; the work API and its serializers."""

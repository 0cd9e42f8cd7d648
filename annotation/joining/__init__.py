"""Joining a study: the invite link and sign-up, the consent, the gate in front of every task
(admission), the volunteer's qualification round; pages, forms and API. The researcher's side of the round is
annotation/progress/."""

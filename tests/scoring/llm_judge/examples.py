"""The question and items the judges' model tests ask about."""

from __future__ import annotations

from scoring.metrics.llm_judge.prompts import JudgeItem, JudgeQuestion
from scoring.metrics.llm_judge.scale import JudgeScale

QUESTION = JudgeQuestion(
    "appropriateness",
    "How appropriate is the reply to the dialog context?",
    JudgeScale(1, 5, ("very poor", "poor", "acceptable", "good", "very good")),
)
ITEMS = [
    JudgeItem(("Hi, how are you?", "Fine, thanks. And you?"), "I am good, thank you for asking."),
    JudgeItem(("Where is the station?",), "Bananas are yellow."),
    JudgeItem(("Do you like music?", "Yes, a lot.", "What kind?"), "Mostly jazz."),
    JudgeItem(("Can you help me with my homework?",), "Sure, what subject is it? I can help with maths."),
    JudgeItem(("Good night.",), "Night!"),
]

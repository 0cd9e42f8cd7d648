"""The prompt templates shipped with the app, one per published recipe; a researcher copies and edits them.

Each is adapted to reading the rating as the judge's next token (the answer prefix ends where the rating
goes), where the papers let the model write first (an explanation, a JSON object, a verdict in brackets).
"""

from __future__ import annotations

from scoring.metrics.llm_judge.prompts import PromptTemplate

G_EVAL = PromptTemplate(
    name="g-eval",
    description=(
        "G-EVAL (Liu et al., 2023): task, evaluation criteria and evaluation steps, then an evaluation "
        "form asking the score only; the score is the probability-weighted mean of the labels."
    ),
    system="You are a careful evaluator of dialog responses.",
    user=(
        "You will be given a conversation between two people. You will then be given one potential "
        "response for the next turn in the conversation.\n\n"
        "Your task is to rate the response on one metric.\n\n"
        "Please make sure you read and understand these instructions carefully.\n\n"
        "Evaluation Criteria:\n\n"
        "{question_name} ({lowest}-{highest}): {question}\n"
        "Scale: {scale}\n\n"
        "Evaluation Steps:\n\n"
        "1. Read the conversation and the response carefully.\n"
        "2. Judge the response on the criterion above, for this conversation.\n"
        "3. Assign a score for {question_name} from {lowest} to {highest}, where {lowest} is the lowest "
        "and {highest} is the highest.\n\n"
        "Conversation History:\n{context}\n\n"
        "Response:\nB: {reply}\n\n"
        "Evaluation Form (scores ONLY):"
    ),
    answer_prefix="- {question_name}: ",
)

LLM_EVAL = PromptTemplate(
    name="llm-eval",
    description=(
        "LLM-EVAL (Lin and Chen, 2023): one prompt naming every quality of the study, the answer a JSON "
        "object of scores; the score of this question is read where its value begins."
    ),
    system="You are a careful evaluator of dialog responses. You answer with a JSON object only.",
    user=(
        "Score the following dialogue response on a scale from {lowest} to {highest} ({scale}) for each "
        "of these qualities:\n{qualities}\n\n"
        "The output should be formatted as a JSON instance with one integer score per quality, in the "
        "order above.\n\n"
        "Context:\n{context}\n\n"
        "Dialogue response:\nB: {reply}"
    ),
    answer_prefix='{{"{question_name}": ',
)

SINGLE_ANSWER = PromptTemplate(
    name="single-answer",
    description=(
        "The single-answer grading judge of Zheng et al. (2023): an impartial judge rates the reply in "
        'the format "Rating: [[n]]"; here the rating is read at once, without the explanation first.'
    ),
    system=(
        "Please act as an impartial judge and evaluate the quality of the response to the conversation "
        "displayed below. {question} Be as objective as possible. Rate the response on a scale of "
        '{lowest} to {highest} ({scale}) by strictly following this format: "Rating: [[n]]", for '
        'example: "Rating: [[{highest}]]".'
    ),
    user=("[Conversation]\n{context}\n\n[The Start of the Response]\nB: {reply}\n[The End of the Response]"),
    answer_prefix="Rating: [[",
)

PAIRWISE = PromptTemplate(
    name="pairwise",
    pairwise=True,
    description=(
        "The pairwise judge of Zheng et al. (2023): which of two responses is better, A, B or a tie C, "
        "asked in both orders to cancel the position bias."
    ),
    system=(
        "Please act as an impartial judge and evaluate the two responses to the conversation displayed "
        "below. {question} Avoid any position biases and ensure that the order in which the responses "
        "were presented does not influence your decision. Do not let the length of the responses "
        'influence your evaluation. Output your verdict by strictly following this format: "[[A]]" if '
        'response A is better, "[[B]]" if response B is better, and "[[C]]" for a tie.'
    ),
    user=(
        "[Conversation]\n{context}\n\n"
        "[The Start of Response A]\n{reply_a}\n[The End of Response A]\n\n"
        "[The Start of Response B]\n{reply_b}\n[The End of Response B]"
    ),
    answer_prefix="Verdict: [[",
)

BUILT_IN_TEMPLATES: dict[str, PromptTemplate] = {
    template.name: template for template in (G_EVAL, LLM_EVAL, SINGLE_ANSWER, PAIRWISE)
}
RATING_TEMPLATES = tuple(name for name, template in BUILT_IN_TEMPLATES.items() if not template.pairwise)

"""LLM judges: a language model rates a reply on a study's question, and the rating is read from the
probabilities of the scale's labels as the model's next token.

G-EVAL (Liu et al., 2023) weights each rating by the probability the model gives it, estimated there by
sampling 20 answers; here the expectation is exact, read from one forward pass: with :math:`p(\\ell)` the
next-token probability of the label of scale point :math:`v_\\ell`,

.. math:: s = \\sum_\\ell v_\\ell \\, p(\\ell) \\Big/ \\sum_\\ell p(\\ell),

beside the most likely label and the mass :math:`\\sum_\\ell p(\\ell)` the model puts on valid labels (a low
mass says the prompt or the model does not fit the task). Pure Python with torch: no Django here
(import-linter contract); the Django side gives the study's questions, the operator's endpoints and the
answer cache.

- :mod:`.scale`: the labels of a question's scale and the reading of their probabilities;
- :mod:`.prompts`: prompt templates, their placeholders, the published recipes, and the split of a prompt
  into the prefix every item shares and the item's own part;
- :mod:`.local_model`: the in-process backend (transformers, from a directory or a GGUF file);
- :mod:`.server_client`: the OpenAI-compatible backend (completions or chat completions with log-probs).
"""

"""LLM judges in the app: the operator's models and endpoints, the judges runs ask for, the servers'
answers kept, and the researchers' prompt templates. The judging itself is in
:mod:`scoring.metrics.llm_judge` (no Django there)."""

from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"
    verbose_name = "Automatic scoring"

    def ready(self) -> None:
        """Add the scoring section to the study page and the metric scores to the item browser (kernel page
        extensions: the annotation app's pages never import this app), and resolve LLM judges' metrics."""
        from kernel.extensions import register_provider, register_section
        from scoring.judges.resolver import resolve_judge
        from scoring.metrics.lookup import register_resolver
        from scoring.study_section import REPLY_SCORES, STUDY_SLOT, reply_scores, study_scoring_html
        from stats.judge_names import JUDGE_PREFIX, MASS_PREFIX

        register_section(STUDY_SLOT, study_scoring_html)
        register_provider(REPLY_SCORES, reply_scores)
        # LLM judges are metrics defined by data: llm-judge:<key> resolves from its stored definition.
        register_resolver((JUDGE_PREFIX, MASS_PREFIX), resolve_judge)

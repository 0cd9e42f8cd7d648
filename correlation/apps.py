from django.apps import AppConfig


class CorrelationConfig(AppConfig):
    name = "correlation"
    verbose_name = "Correlation reports"

    def ready(self) -> None:
        """Add "How many more ratings?" to the annotation page (kernel page extensions: the annotation app's
        pages never import this app)."""
        from correlation.more_ratings.section import ANNOTATION_SLOT, rating_plan_html
        from kernel.extensions import register_section

        register_section(ANNOTATION_SLOT, rating_plan_html)

from django.apps import AppConfig


class CorrelationConfig(AppConfig):
    name = "correlation"
    verbose_name = "Correlation reports"

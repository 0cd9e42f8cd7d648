from django.apps import AppConfig


class KernelConfig(AppConfig):
    """The layer below every app: access rules, CSV cell safety, the importers' primitives, the data version,
    sending tasks, URL converters, and the places where an upper app adds to a lower app's pages
    (docs/architecture.md). It has no models and imports no app."""

    name = "kernel"
    default_auto_field = "django.db.models.BigAutoField"

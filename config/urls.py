from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.utils.functional import lazy
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

from annotation.studies import views as studies_views
from config import doc_pages, health
from config.api_schema import SchemaView
from kernel import url_converters  # noqa: F401  (registers <id:...>: ids above 2**63 - 1 are a 404)

urlpatterns = [
    path("", studies_views.home, name="home"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("studies/", include("annotation.urls")),
    path("work/", include("annotation.work.urls")),
    path("scoring/", include("scoring.urls")),
    path("reports/", include("correlation.urls")),
    path("api/", include("config.api_urls")),
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    # The split view serves Swagger UI's start-up script at /api/docs/?script rather than inline: the pages run
    # scripts from this site's files only (Content-Security-Policy, config/security_headers.py).
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="api_docs.html"),
        name="api-docs",
    ),
    path(
        "api/redoc/",
        SpectacularRedocView.as_view(url_name="api-schema", template_name="api_redoc.html"),
        name="api-redoc",
    ),
    path("admin/", admin.site.urls),
    # The project's documents, linked from the pages' help (config/doc_pages.py).
    path("docs/", doc_pages.doc_index, name="doc-index"),
    path("docs/<slug:name>/", doc_pages.doc_page, name="doc-page"),
    # No login: docker-compose healthchecks and monitoring (config/health.py).
    path("health/", health.web_health, name="health"),
    path("health/workers/", health.worker_health, name="health-workers"),
    # Browsers ask every site for /favicon.ico; the pages that name no icon (ReDoc, the 500 page) get the app's
    # (base.html links it). Lazy: the static file's URL is looked up when asked for, not at import.
    path("favicon.ico", RedirectView.as_view(url=lazy(static, str)("favicon.svg")), name="favicon"),
]

# Error pages that render without request.user, and JSON under /api/ (config/error_views.py).
handler400 = "config.error_views.bad_request"
handler403 = "config.error_views.permission_denied"
handler404 = "config.error_views.page_not_found"
handler500 = "config.error_views.server_error"

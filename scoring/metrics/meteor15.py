"""METEOR 1.5 (Denkowski and Lavie, 2014) as the dialog literature reports it: nlg-eval's numbers.

nlg-eval scores METEOR through pycocoevalcap's wrapper, which runs the reference implementation,
``java -jar -Xmx2G meteor-1.5.jar - - -stdio -l en -norm``, in the jar's folder (so the jar finds
``data/paraphrase-en.gz``). This module gives the same per-item numbers from the same jar and paraphrase
table (both shipped by pycocoevalcap==1.2; nothing is ever downloaded), through one long-lived Java process
per Python process. It is not :mod:`scoring.metrics.meteor` (nltk's METEOR, a different algorithm with
different values).

The jar's stdio protocol, one line in and the answers out, in order:

- ``SCORE ||| ref 1 ||| ... ||| ref n ||| hypothesis`` answers one line of statistics (23 numbers). The
  jar aligns the hypothesis with every reference and keeps the best one itself, so every reference of an
  item is sent.
- ``EVAL ||| stats 1 ||| ... ||| stats k`` answers k lines, the score of each item's statistics (each
  computed alone, so how items are grouped into EVAL lines does not change them), then one aggregate line.

pycocoevalcap's ``Meteor.compute_score`` sends one SCORE line and waits for its answer before sending the
next, then one EVAL line for the whole batch; its per-item scores (its second result) are
``float(answer.strip())``, and so are these. Here, up to :data:`CHUNK_ITEMS` SCORE lines are written before
their answers are read, then their EVAL line: writing and reading are multiplexed with ``poll`` on a
non-blocking input pipe, so a full output pipe can never deadlock the two processes.

Text is cleaned as pycocoevalcap cleans it, plus what keeps the line protocol intact:

- the hypothesis: ``.replace('|||', '').replace('  ', ' ')``, pycocoevalcap's own cleaning;
- every reference: ``.replace('|||', '')`` (pycocoevalcap sends references as they are, so a reference
  holding ``|||`` would be split into several there; here it stays one reference);
- in every text, ``\\r`` and ``\\n`` become spaces first (the jar reads lines; a newline would end the line
  early and shift every later answer). Text without line breaks or ``|||`` is sent exactly as pycocoevalcap
  sends it. Lone surrogates, which UTF-8 cannot encode, are sent as ``?``.

The process: started on first use (the jar loads the paraphrase table, several seconds; see
:func:`meteor15_start`); shared by the threads of a process under a lock; started again once, automatically,
when it has died since the last call (found dead when a call begins, or failing in a call's first exchange:
the whole batch then goes to the new process; one that fails too is an error); stopped at interpreter exit. A process forked from this one (Celery's
prefork workers) drops its parent's process in the child (``os.register_at_fork``) and starts its own on
first use. A Python process killed without running ``atexit`` leaves no Java behind either: the jar ends when
its input pipe closes.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import select
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, TypeVar

from scoring.metrics.file_hashes import cached_file_sha256

PACKAGE = "pycocoevalcap==1.2"
JAR_NAME = "meteor-1.5.jar"
PARAPHRASE_NAME = "data/paraphrase-en.gz"
# pycocoevalcap's command line, word for word (its ``-jar -Xmx2G`` order included)
COMMAND_OPTIONS = ("-jar", "-Xmx2G", JAR_NAME, "-", "-", "-stdio", "-l", "en", "-norm")
JAVA_MISSING = (
    "METEOR 1.5 needs a Java runtime (java not found on PATH); install Debian's default-jre-headless — "
    "scripts/setup.sh does"
)
CHUNK_ITEMS = 1000  # SCORE lines written before their answers are read; the stats of one EVAL line
IDLE_TIMEOUT_S = 300.0  # no byte in or out for this long: the process is stuck (its start takes seconds)
STOP_TIMEOUT_S = 5.0  # after its input closes, the jar exits on its own; killed if it takes longer
STDERR_TAIL_LINES = 20
_READ_SIZE = 1 << 16
_HASH_PREFIX = 12

_T = TypeVar("_T")


class Meteor15Error(RuntimeError):
    """METEOR 1.5 cannot run here (no Java, no jar or paraphrase table) or its process failed."""


class _ProcessDied(Exception):
    """The jar's process ended (or closed a pipe) during an exchange: worth one retry on a fresh one."""


class _ProcessFailed(Exception):
    """The jar's process is stuck or answered out of protocol: not worth a retry."""


# ---------------------------------------------------------------------------------------------- public API


def meteor15_batch(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> list[float]:
    """METEOR 1.5 of each ``hypotheses[i]`` against all of ``references[i]``, as pycocoevalcap's
    ``Meteor().compute_score`` gives it (its per-item list): the jar keeps the best reference itself.

    Raises ValueError when the lengths differ or an item has no reference, Meteor15Error when the jar
    cannot run or its process fails.
    """
    lines = _score_lines(hypotheses, references)
    if not lines:
        return []
    return _MANAGER.run(lambda process: _scores(process, lines))


def meteor15_start() -> None:
    """Start this process's jar, if it is not running, and wait until it answers (warm-up, timing)."""
    _MANAGER.run(lambda process: _scores(process, [_score_line("a", ["a"])]))


def meteor15_shutdown() -> None:
    """Stop this process's jar, if one runs (the next call starts a new one)."""
    with _MANAGER.lock:
        _MANAGER.discard()


def meteor15_pid() -> int | None:
    """The process id of this process's running jar, or None (for tests and benchmarks)."""
    process = _MANAGER.process
    if process is None or process.owner != os.getpid() or process.popen.poll() is not None:
        return None
    return process.popen.pid


def meteor15_version() -> str:
    """``meteor-1.5+jar.<sha256 prefix>+paraphrase.<sha256 prefix>``: what identifies the scores' source.

    The hashes are computed once per file state (path, size, modification time, inode) and cached, so a
    changed jar or table gives another version string.
    """
    jar, paraphrase = _checked_files()
    return f"meteor-1.5+jar.{_file_sha256_prefix(jar)}+paraphrase.{_file_sha256_prefix(paraphrase)}"


# ------------------------------------------------------------------------------------------- input lines


def _score_lines(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> list[bytes]:
    if isinstance(hypotheses, str) or isinstance(references, str):
        raise TypeError("hypotheses and references must be sequences, not one string")
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} reference lists")
    lines = []
    for index, (hypothesis, item_references) in enumerate(zip(hypotheses, references, strict=True)):
        if isinstance(item_references, str):
            raise TypeError(f"references[{index}] must be a sequence of strings, not one string")
        if not item_references:
            raise ValueError(f"item {index} has no reference: METEOR 1.5 needs at least one per item")
        lines.append(_score_line(hypothesis, item_references))
    return lines


def _one_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


def _score_line(hypothesis: str, references: Sequence[str]) -> bytes:
    hypothesis = _one_line(hypothesis).replace("|||", "").replace("  ", " ")
    cleaned = [_one_line(reference).replace("|||", "") for reference in references]
    return f"SCORE ||| {' ||| '.join(cleaned)} ||| {hypothesis}\n".encode("utf-8", "replace")


def _scores(process: _JarProcess, lines: Sequence[bytes]) -> list[float]:
    scores: list[float] = []
    for start in range(0, len(lines), CHUNK_ITEMS):
        chunk = lines[start : start + CHUNK_ITEMS]
        stats = [line.strip() for line in process.exchange(b"".join(chunk), len(chunk))]
        for line in stats:
            if not line[:1].isdigit():  # e.g. "Error: specify hypothesis and at least one reference"
                raise _ProcessFailed(f"it answered {line[:200]!r} to a SCORE line instead of statistics")
        answers = process.exchange(b"EVAL ||| " + b" ||| ".join(stats) + b"\n", len(stats) + 1)
        try:
            scores.extend(float(answer.strip()) for answer in answers[:-1])
        except ValueError as error:
            raise _ProcessFailed(
                f"it answered an EVAL line with something else than scores: {error}"
            ) from None
    return scores


# ------------------------------------------------------------------------------------------- the process


class _JarProcess:
    """One running jar: its pipes (the input non-blocking), what is left of a partial answer line, and its
    stderr in a temporary file (nothing to drain, and its last lines go into error messages)."""

    def __init__(self, java: str, folder: Path) -> None:
        self.owner = os.getpid()
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115  closed with the pipes
        try:
            self.popen = subprocess.Popen(
                [java, *COMMAND_OPTIONS],
                cwd=folder,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                bufsize=0,  # unbuffered pipe objects: nothing of the parent's is ever flushed by a child
            )
        except OSError as error:
            self._stderr.close()
            raise Meteor15Error(f"METEOR 1.5: could not start {java}: {error}") from error
        assert self.popen.stdin is not None
        assert self.popen.stdout is not None
        self._input = self.popen.stdin.fileno()
        self._output = self.popen.stdout.fileno()
        os.set_blocking(self._input, False)
        self._partial = b""

    def exchange(self, payload: bytes, answers: int) -> list[bytes]:
        """Write ``payload`` and read ``answers`` lines back, writing and reading as each pipe allows."""
        poller = select.poll()
        poller.register(self._output, select.POLLIN)
        view = memoryview(payload)
        sent = 0
        if payload:
            poller.register(self._input, select.POLLOUT)
        lines: list[bytes] = []
        while len(lines) < answers:
            events = poller.poll(int(IDLE_TIMEOUT_S * 1000))
            if not events:
                raise _ProcessFailed(f"it neither read nor answered for {IDLE_TIMEOUT_S:.0f} s")
            for fd, _event in events:
                if fd == self._input:
                    try:
                        sent += os.write(self._input, view[sent : sent + _READ_SIZE])
                    except BlockingIOError:
                        continue
                    except OSError as error:  # BrokenPipeError: it exited
                        raise _ProcessDied(f"writing to it failed ({error})") from None
                    if sent == len(payload):
                        poller.unregister(self._input)
                    continue
                chunk = os.read(self._output, _READ_SIZE)
                if not chunk:
                    raise _ProcessDied("it closed its output")
                *complete, self._partial = (self._partial + chunk).split(b"\n")
                lines.extend(complete)
        if len(lines) > answers or self._partial:
            raise _ProcessFailed(f"it answered {len(lines)} line(s) where {answers} were expected")
        return lines

    def stderr_tail(self) -> str:
        try:
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, size - _READ_SIZE))
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return "(its stderr could not be read)"
        lines = text.strip().splitlines()[-STDERR_TAIL_LINES:]
        return "\n".join(lines) if lines else "(its stderr is empty)"

    def stop(self) -> None:
        """Close its input (the jar exits at end of input), wait a little, kill it if it is still there."""
        self._close_pipes()
        try:
            self.popen.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()

    def kill(self) -> None:
        self.popen.kill()
        self._close_pipes()
        self.popen.wait()

    def abandon(self) -> None:
        """In a forked child: close this copy of the parent's pipes, leaving the parent's process alone."""
        self._close_pipes()

    def _close_pipes(self) -> None:
        for stream in (self.popen.stdin, self.popen.stdout, self._stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


class _JarManager:
    """This Python process's jar process: started lazily, shared under a lock, restarted once if it died."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.process: _JarProcess | None = None
        # A forked child's copies of its parent's Popen objects: kept, so that their finalizers never try
        # to reap (or warn about) a process that is not the child's.
        self.abandoned: list[_JarProcess] = []

    def run(self, work: Callable[[_JarProcess], _T]) -> _T:
        with self.lock:
            for attempt in range(2):
                process, fresh = self._running()
                try:
                    return work(process)
                except _ProcessDied as died:
                    stderr = process.stderr_tail()
                    self.discard()
                    if fresh or attempt:
                        raise Meteor15Error(self._failure(process, str(died), stderr)) from None
                except _ProcessFailed as failed:
                    stderr = process.stderr_tail()
                    self.process = None
                    process.kill()
                    raise Meteor15Error(self._failure(process, str(failed), stderr)) from None
            raise AssertionError("unreachable")

    def discard(self) -> None:
        """Stop the process (caller holds the lock); a process inherited through fork is only abandoned."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.owner != os.getpid():
            process.abandon()
            self.abandoned.append(process)
        else:
            process.stop()

    def after_fork_in_child(self) -> None:
        self.lock = threading.Lock()  # the parent's may have been held by one of its other threads
        process, self.process = self.process, None
        if process is not None:
            process.abandon()
            self.abandoned.append(process)

    def stop_at_exit(self) -> None:
        if self.lock.acquire(timeout=STOP_TIMEOUT_S):
            try:
                self.discard()
            finally:
                self.lock.release()
        elif self.process is not None and self.process.owner == os.getpid():
            self.process.popen.kill()  # another thread is stuck in a call: the process goes anyway

    def _running(self) -> tuple[_JarProcess, bool]:
        """The live process, and whether it was started just now."""
        process = self.process
        if process is not None and process.owner == os.getpid() and process.popen.poll() is None:
            return process, False
        self.discard()  # died since the last call, or inherited: start again
        java = shutil.which("java")
        if java is None:
            raise Meteor15Error(JAVA_MISSING)
        jar, _ = _checked_files()
        self.process = _JarProcess(java, jar.parent)
        return self.process, True

    @staticmethod
    def _failure(process: _JarProcess, what: str, stderr: str) -> str:
        status = process.popen.poll()
        ended = "" if status is None else f", exit status {status}"
        return (
            f"the METEOR 1.5 process (java, pid {process.popen.pid}{ended}) failed: {what}; the last lines of "
            f"its stderr:\n{stderr}"
        )


_MANAGER = _JarManager()
os.register_at_fork(after_in_child=_MANAGER.after_fork_in_child)
atexit.register(_MANAGER.stop_at_exit)


# --------------------------------------------------------------------------------------------- the files


def _checked_files() -> tuple[Path, Path]:
    """(jar, paraphrase table) of the installed pycocoevalcap, or Meteor15Error saying what is missing."""
    spec = importlib.util.find_spec("pycocoevalcap.meteor.meteor")  # imports no module code: namespaces
    if spec is None or spec.origin is None:
        raise Meteor15Error(
            f"METEOR 1.5 needs the jar that {PACKAGE} ships, and pycocoevalcap is not installed"
        )
    folder = Path(spec.origin).parent
    jar, paraphrase = folder / JAR_NAME, folder / PARAPHRASE_NAME
    for path, what in ((jar, "jar"), (paraphrase, "paraphrase table")):
        if not path.is_file():
            raise Meteor15Error(
                f"METEOR 1.5's {what} {path} is missing; it comes with {PACKAGE}: reinstall that package"
            )
    return jar, paraphrase


def _file_sha256_prefix(path: Path) -> str:
    return cached_file_sha256(path)[:_HASH_PREFIX]

"""METEOR 1.5 through the project's jar process equals pycocoevalcap's own wrapper (nlg-eval's numbers), item
for item, and its process is shared, restarted, fork-safe and thread-safe.

Every expected value is computed here by pycocoevalcap's ``Meteor().compute_score`` (its own Java process,
started once for the module). Java processes take seconds to start (the paraphrase table), so the module
shares one warm process of each kind; the Java-missing test comes last, as it stops the project's one.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import random
import re
import shutil
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from scoring.metrics.meteor15 import (
    JAVA_MISSING,
    Meteor15Error,
    meteor15_batch,
    meteor15_pid,
    meteor15_shutdown,
    meteor15_start,
    meteor15_version,
)
from tests.waiting import WAITS_ON_PROGRESS, cpu_ticks, wait_until

DIALOGUES_TEST = Path("dailydialog") / "test" / "dialogues_test.txt"
EOU = "__eou__"
SENTENCE_WORDS = (
    "i you we the a is are was do not go see good great fine car automobile house home dinner lunch "
    "coffee tea train ticket happy glad sorry thanks please help call talk said told ask question problem "
    "running run ran buy bought nice lovely weather today tomorrow , . ? !"
)

# (hypothesis, references as given to meteor15_batch, the same references as given to pycocoevalcap)
EDGE_CASES: list[tuple[str, list[str], list[str]]] = [
    ("hello", ["hello"], ["hello"]),
    ("hi", ["hello"], ["hello"]),
    ("Hello , World !", ["hello, world!"], ["hello, world!"]),
    ("THE CAT SAT ON THE MAT.", ["the cat sat on the mat ."], ["the cat sat on the mat ."]),
    ("i am fine , thank you .", ["i am fine , thank you ."], ["i am fine , thank you ."]),
    ("?!...", ["!?"], ["!?"]),
    (
        "the weather is nice today",
        ["it is raining", "the weather is lovely today", "nice"],
        ["it is raining", "the weather is lovely today", "nice"],
    ),
    ("a ||| b  c", ["a b c"], ["a b c"]),  # pycocoevalcap cleans the hypothesis itself
    ("yes it is", ["yes ||| it is", "no"], ["yes  it is", "no"]),  # a reference's '|||' is removed
    ("too  many   spaces here", ["too many spaces here"], ["too many spaces here"]),
    ("It’s a café — naïve “quotes”", ['it\'s a cafe - naive "quotes"'], ['it\'s a cafe - naive "quotes"']),
    ("I don’t know", ["i don't know"], ["i don't know"]),
    ("我 很 好 😀", ["我 很 好"], ["我 很 好"]),
    ("", ["something to say"], ["something to say"]),
    ("what about an empty reference", [""], [""]),
    ("running runs ran", ["run running runner"], ["run running runner"]),
    ("he bought a car", ["he purchased an automobile"], ["he purchased an automobile"]),
]


@pytest.fixture(scope="module")
def java() -> str:
    found = shutil.which("java")
    if found is None:
        pytest.skip("METEOR 1.5 tests need a Java runtime: install default-jre-headless (scripts/setup.sh)")
    return found


@pytest.fixture(scope="module")
def coco(java: str) -> Iterator[Any]:
    """pycocoevalcap's wrapper with its own process; the project's process starts alongside (both load)."""
    from pycocoevalcap.meteor.meteor import Meteor

    meteor = Meteor()
    yield meteor
    meteor.meteor_p.kill()
    meteor.meteor_p.wait()


def coco_scores(coco: Any, hypotheses: Sequence[str], references: Sequence[list[str]]) -> list[float]:
    gts = dict(enumerate(references))
    res = {index: [hypothesis] for index, hypothesis in enumerate(hypotheses)}
    return [float(score) for score in coco.compute_score(gts, res)[1]]


def sentences(count: int, seed: int) -> list[str]:
    words = SENTENCE_WORDS.split()
    rng = random.Random(seed)
    return [" ".join(rng.choice(words) for _ in range(rng.randint(1, 18))) for _ in range(count)]


def test_edge_cases_equal_pycocoevalcap(coco: Any) -> None:
    hypotheses = [hypothesis for hypothesis, _, _ in EDGE_CASES]
    ours = meteor15_batch(hypotheses, [references for _, references, _ in EDGE_CASES])
    theirs = coco_scores(coco, hypotheses, [references for _, _, references in EDGE_CASES])
    assert ours == theirs
    assert len(set(ours)) > 5  # not one constant value


def test_one_item_per_call_equals_one_batch(coco: Any) -> None:
    """The EVAL grouping does not change a score, and items never leak into each other."""
    batch = meteor15_batch([h for h, _, _ in EDGE_CASES], [r for _, r, _ in EDGE_CASES])
    alone = [meteor15_batch([h], [r])[0] for h, r, _ in EDGE_CASES]
    assert alone == batch
    assert meteor15_batch([], []) == []


def test_line_breaks_become_spaces(coco: Any) -> None:
    hypotheses = ["a b\nc", "the cat\r\nsat on the mat", "one more line"]
    references = [["a b c"], ["the cat sat\non the mat"], ["one more line\n"]]
    ours = meteor15_batch(hypotheses, references)
    theirs = coco_scores(
        coco,
        ["a b c", "the cat  sat on the mat", "one more line"],
        [["a b c"], ["the cat sat on the mat"], ["one more line "]],
    )
    assert ours == theirs
    assert ours[2] == meteor15_batch(["one more line"], [["one more line"]])[0]  # nothing shifted


def test_many_pairs_several_references_equal_pycocoevalcap(coco: Any) -> None:
    """More than one chunk of pipelined SCORE lines (CHUNK_ITEMS), one to three references per item."""
    hypotheses = sentences(1200, seed=1)
    pool = sentences(3600, seed=2)
    references = [pool[3 * i : 3 * i + 1 + i % 3] for i in range(len(hypotheses))]
    assert meteor15_batch(hypotheses, references) == coco_scores(coco, hypotheses, references)


@pytest.mark.shared_data
def test_dailydialog_pairs_equal_pycocoevalcap(coco: Any, shared_data: Path) -> None:
    path = shared_data / DIALOGUES_TEST
    if not path.is_file():
        pytest.skip(f"real-data check skipped: {path} is not present")
    replies = []
    for line in path.read_text(encoding="utf-8").splitlines():
        turns = [turn.strip() for turn in line.split(EOU) if turn.strip()]
        replies.extend(turns[1:])
        if len(replies) >= 400:
            break
    hypotheses = [replies[(i + 7) % 400] for i in range(200)]  # another pair's reply
    references = [[replies[i]] + ([replies[i + 200]] if i % 3 == 0 else []) for i in range(200)]
    hypotheses[5] = references[5][0]  # one exact match among them
    ours = meteor15_batch(hypotheses, references)
    assert ours == coco_scores(coco, hypotheses, references)
    assert len(set(ours)) > 100


def test_invalid_input_is_refused() -> None:
    with pytest.raises(ValueError, match="item 1 has no reference"):
        meteor15_batch(["a", "b"], [["a"], []])
    with pytest.raises(ValueError, match="2 hypotheses but 1 reference lists"):
        meteor15_batch(["a", "b"], [["a"]])
    with pytest.raises(TypeError, match=r"references\[0\]"):
        meteor15_batch(["a"], ["a"])


def test_version_names_the_files_by_their_hashes(java: str) -> None:
    spec = importlib.util.find_spec("pycocoevalcap.meteor.meteor")
    assert spec is not None
    assert spec.origin is not None
    folder = Path(spec.origin).parent
    jar = hashlib.sha256((folder / "meteor-1.5.jar").read_bytes()).hexdigest()
    table = hashlib.sha256((folder / "data" / "paraphrase-en.gz").read_bytes()).hexdigest()
    version = meteor15_version()
    assert version == f"meteor-1.5+jar.{jar[:12]}+paraphrase.{table[:12]}"
    assert meteor15_version() == version
    assert "|" not in version  # it goes into a signature


def test_process_is_reused_and_restarted_after_it_is_killed(coco: Any) -> None:
    hypotheses, references = [h for h, _, _ in EDGE_CASES], [r for _, r, _ in EDGE_CASES]
    expected = coco_scores(coco, hypotheses, [r for _, _, r in EDGE_CASES])
    assert meteor15_batch(hypotheses, references) == expected
    first = meteor15_pid()
    assert first is not None
    assert meteor15_batch(hypotheses, references) == expected
    assert meteor15_pid() == first

    os.kill(first, signal.SIGKILL)
    assert meteor15_batch(hypotheses, references) == expected
    second = meteor15_pid()
    assert second is not None
    assert second != first
    assert meteor15_batch(hypotheses, references) == expected
    assert meteor15_pid() == second


@WAITS_ON_PROGRESS
def test_forked_child_starts_its_own_process(coco: Any) -> None:
    hypotheses, references = sentences(300, seed=3), [[s] for s in sentences(300, seed=4)]
    expected = coco_scores(coco, hypotheses, references)
    meteor15_start()
    parent_java = meteor15_pid()
    assert parent_java is not None

    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # the child: never returns into pytest
        status = 1
        try:
            os.close(read_end)
            inherited = meteor15_pid()  # the parent's process is not the child's
            scores = meteor15_batch(hypotheses, references)
            report = {"inherited": inherited, "java": meteor15_pid(), "scores": scores}
            with os.fdopen(write_end, "w") as pipe:
                json.dump(report, pipe)
            status = 0
        finally:
            os._exit(status)  # no atexit: its Java must end when its input pipe closes

    os.close(write_end)
    exit_codes: list[int] = []

    def ended() -> bool:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            exit_codes.append(os.waitstatus_to_exitcode(status))
        return bool(exit_codes)

    wait_until(  # the child starts its own Java and scores: its CPU time moves while it does
        ended, what="the forked child's METEOR 1.5 scores", progress=lambda: cpu_ticks(child)
    )
    with os.fdopen(read_end) as pipe:  # the report (a few kB) waits in the pipe's buffer
        text = pipe.read()
    assert exit_codes == [0]
    report = json.loads(text)
    assert report["inherited"] is None
    assert report["java"] not in (None, parent_java)
    assert report["scores"] == expected
    assert _gone_or_zombie(report["java"], within_s=15)
    # the parent's process was left alone by the child
    assert meteor15_batch(hypotheses, references) == expected
    assert meteor15_pid() == parent_java


@WAITS_ON_PROGRESS
def test_two_threads_at_once_get_their_own_scores(coco: Any) -> None:
    batches = [(sentences(400, seed=10 + k), [[s] for s in sentences(400, seed=20 + k)]) for k in range(2)]
    expected = [coco_scores(coco, hypotheses, references) for hypotheses, references in batches]
    results: list[list[float] | BaseException | None] = [None, None]
    start = threading.Barrier(2)

    def score(index: int) -> None:
        start.wait()
        try:
            results[index] = meteor15_batch(*batches[index])
        except BaseException as error:  # reported below, in the test's thread
            results[index] = error

    threads = [threading.Thread(target=score, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    wait_until(  # the shared Java process computes both batches: its CPU time moves while it does
        lambda: not any(thread.is_alive() for thread in threads),
        what="both threads' METEOR 1.5 scores",
        progress=lambda: (tuple(result is None for result in results), _java_cpu_ticks()),
    )
    assert results == expected


@pytest.mark.timeout(30)
def test_missing_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Last in the module: it stops the shared process."""
    meteor15_shutdown()
    assert meteor15_pid() is None
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no java on PATH
    started = time.monotonic()
    with pytest.raises(Meteor15Error, match=re.escape(JAVA_MISSING)):
        meteor15_batch(["a"], [["a"]])
    assert "default-jre-headless" in JAVA_MISSING
    assert time.monotonic() - started < 5
    assert meteor15_pid() is None


def _java_cpu_ticks() -> int:
    pid = meteor15_pid()
    return 0 if pid is None else cpu_ticks(pid)


def _gone_or_zombie(pid: int, *, within_s: float) -> bool:
    """Whether process ``pid`` ends (no /proc entry, or a zombie no one has reaped yet) within the time."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.1)
    return False

"""DailyDialog dialogue files (Li et al., IJCNLP 2017) as every context-reply pair they hold.

RUBER (Tao et al., 2018, section 4.1) and the multi-reference study (Gupta et al., 2019, section 3) both evaluate replies
to DailyDialog contexts: for a dialogue of n utterances, context i holds utterances 0..i and the corpus's
reply, utterance i+1, becomes the context's "original" reference. Context ids ``"{dialogue}_{i}"``
(0-based) follow multirefeval's ``context_id`` convention, so a later ``multiref-ratings`` import finds
them. Optional ``dialogues_act_*.txt`` / ``dialogues_emotion_*.txt`` files add per-turn labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from annotation.importers.records import (
    ORIGINAL,
    ContextRecord,
    ParsedImport,
    Source,
    alternating_turns,
    collapse_whitespace,
    id_key,
)
from kernel.importing.decoding import file_text, numbered_lines
from kernel.importing.problems import ImportFile, ProblemLog

END_OF_UTTERANCE = "__eou__"
# Label codes of the corpus readme, named as multireftest.json names them so both imports look alike.
ACT_NAMES = {1: "inform", 2: "question", 3: "directive", 4: "commissive"}
EMOTION_NAMES = {
    0: "no_emotion",
    1: "anger",
    2: "disgust",
    3: "fear",
    4: "happiness",
    5: "sadness",
    6: "surprise",
}
LABEL_KINDS = {"_act": ("act", ACT_NAMES), "_emotion": ("emotion", EMOTION_NAMES)}


def parse_dailydialog(files: Sequence[ImportFile], log: ProblemLog) -> ParsedImport:
    parsed = ParsedImport(anonymous_prefix="dailydialog-anon")
    dialogue_files: list[ImportFile] = []
    label_files: dict[str, list[tuple[str, ImportFile]]] = {}  # dialogue file name -> (kind, file)
    for file in files:
        name = file.basename
        marker = next((marker for marker in LABEL_KINDS if marker in name), None)
        if marker is None:
            dialogue_files.append(file)
        else:
            label_files.setdefault(name.replace(marker, "", 1), []).append((marker, file))
    names = [file.basename for file in dialogue_files]
    for name, given in label_files.items():
        if name not in names:
            for _, file in given:
                log.problem(file.basename, None, None, f"no dialogue file {name} was given for these labels")
    if not dialogue_files:
        log.problem("", None, None, "no DailyDialog dialogue file (dialogues_*.txt) was given")
    for name in {name for name in names if names.count(name) > 1}:
        log.problem(name, None, None, "two files have this name; their context ids would collide")
    with_prefix = len(dialogue_files) > 1
    for file in dialogue_files:
        prefix = f"{PurePath(file.basename).stem}:" if with_prefix else ""
        labels = [_labels(kind, label_file, log) for kind, label_file in label_files.get(file.basename, [])]
        _parse_dialogues(file, prefix, labels, parsed, log)
    return parsed


def _labels(marker: str, file: ImportFile, log: ProblemLog) -> tuple[str, str, list[tuple[int, list[str]]]]:
    """(turn key, file name, [(line, raw codes)] per dialogue) of one act or emotion file."""
    text = file_text(file, log)
    lines = [] if text is None else [(number, line.split()) for number, line in numbered_lines(text)]
    return LABEL_KINDS[marker][0], file.basename, lines


def _parse_dialogues(
    file: ImportFile,
    prefix: str,
    labels: list[tuple[str, str, list[tuple[int, list[str]]]]],
    parsed: ParsedImport,
    log: ProblemLog,
) -> None:
    name = file.basename
    text = file_text(file, log)
    if text is None:
        return
    lines = numbered_lines(text)
    for key, label_name, label_lines in labels:
        if label_lines and len(label_lines) != len(lines):
            log.warn(
                label_name,
                None,
                None,
                f"{len(label_lines)} label lines for {len(lines)} dialogues; "
                f"dialogues without a line get no {key}",
            )
    for dialogue, (number, line) in enumerate(lines):
        log.line_read(name, number)
        stripped = line.strip()
        if not stripped.endswith(END_OF_UTTERANCE):
            log.problem(
                name,
                number,
                None,
                f'the line does not end with "{END_OF_UTTERANCE}"; is this a DailyDialog file?',
            )
            continue
        utterances = [collapse_whitespace(part) for part in stripped.split(END_OF_UTTERANCE)[:-1]]
        if not all(utterances):
            empty = utterances.index("") + 1
            log.problem(name, number, None, f"utterance {empty} is empty")
            continue
        if len(utterances) < 2:
            log.warn(name, number, None, "a one-utterance dialogue has no context-reply pair; skipped")
            continue
        extras = _turn_labels(dialogue, len(utterances), labels, log)
        turns = alternating_turns(utterances, extras)
        for index in range(len(utterances) - 1):
            external_id = f"{prefix}{dialogue}_{index}"
            context = ContextRecord(
                key=id_key(external_id),
                source=Source(name, number),
                external_id=external_id,
                turns=turns[: index + 1],
            )
            context.add_reference(utterances[index + 1], ORIGINAL)
            parsed.add_context(context)


def _turn_labels(
    dialogue: int,
    length: int,
    labels: list[tuple[str, str, list[tuple[int, list[str]]]]],
    log: ProblemLog,
) -> list[dict[str, Any]]:
    """Per-turn {"act": ..., "emotion": ...}; a label line that does not fit its dialogue is dropped
    with a warning (the train split has one such line, a known quirk of the original files)."""
    extras: list[dict[str, Any]] = [{} for _ in range(length)]
    for key, label_name, label_lines in labels:
        if dialogue >= len(label_lines):
            continue
        number, codes = label_lines[dialogue]
        names = ACT_NAMES if key == "act" else EMOTION_NAMES
        if len(codes) != length:
            log.warn(
                label_name,
                number,
                None,
                f"{len(codes)} {key} labels for a dialogue of {length} utterances; "
                f"its {key} labels are dropped",
            )
            continue
        try:
            values = [names[int(code)] for code in codes]
        except (ValueError, KeyError):
            log.warn(label_name, number, None, f"unknown {key} code in {' '.join(codes)!r}; labels dropped")
            continue
        for extra, value in zip(extras, values, strict=True):
            extra[key] = value
    return extras

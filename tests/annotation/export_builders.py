"""A study with every kind of annotation in it, made through the real services: ratings (two questions,
several annotators, one excluded from reports), collected references and diversity judgments. Texts
and names carry commas, quotes, a newline and non-ASCII letters, so CSV quoting and UTF-8 are tested."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.models import Annotator, DialogContext, Response, Study, System
from annotation.services.assignment import next_assignment
from annotation.services.studies import QuestionSpec, study_create
from annotation.services.submissions import diversity_submit, rating_submit, reference_add
from annotation.services.work_items import work_items_sync
from tests.factories import AnnotatorFactory, ResearcherFactory

AWKWARD_SYSTEM = 'seq2seq, "beam" é'
AWKWARD_REFERENCE = 'ok, "fine" —\nsee you 明天'


@dataclass
class AnnotatedStudy:
    study: Study
    annotators: list[Annotator]
    excluded: Annotator


def annotated_study(*, name: str = "export study") -> AnnotatedStudy:
    owner = ResearcherFactory.create()
    study = study_create(
        owner=owner,
        name=name,
        ratings_per_item=3,
        questions=[
            QuestionSpec(name="appropriateness", scale_min=0, scale_max=2, labels=["bad", "ok", "good"]),
            QuestionSpec(name="fluency", scale_min=1, scale_max=5),
        ],
    )
    study.check_interval = 0
    study.references_wanted = 2
    study.diversity_enabled = True
    study.kappa_threshold = None
    study.save()
    systems = [
        System.objects.create(study=study, name=AWKWARD_SYSTEM),
        System.objects.create(study=study, name="human"),
    ]
    for index in range(3):
        context = DialogContext.objects.create(
            study=study,
            external_id=f"dlg,{index}" if index else "",  # one context without an external id
            turns=[{"speaker": "A", "text": f"what now , {index} ?"}, {"speaker": "B", "text": "hm ?"}],
            position=index,
        )
        for system in systems:
            Response.objects.create(
                context=context,
                system=system,
                text=f"{system.name} replies {index}",
                external_id=f"r-{index}-{system.pk}" if index != 1 else "",
            )
    # Two more samples of one system for the first context: a diversity item.
    first_context = DialogContext.objects.filter(study=study).order_by("position").first()
    assert first_context is not None
    for sample in (1, 2):
        Response.objects.create(
            context=first_context, system=systems[0], text=f"another option {sample}", sample_index=sample
        )
    work_items_sync(study=study)

    people = [AnnotatorFactory.create(study=study, pseudonym=f"rater-{n}") for n in range(3)]
    for offset, annotator in enumerate(people):
        for step in range(4):
            handout = next_assignment(annotator=annotator, kind="rate")
            rating_submit(
                annotator=annotator,
                assignment_id=handout.assignment.pk,
                values={"appropriateness": (offset + step) % 3, "fluency": 1 + (offset * step) % 5},
                seconds=1.5 + step if step != 2 else None,
            )
    writer = people[0]
    handout = next_assignment(annotator=writer, kind="write")
    reference_add(
        annotator=writer, assignment_id=handout.assignment.pk, text=AWKWARD_REFERENCE, seconds=12.25
    )
    reference_add(
        annotator=writer, assignment_id=handout.assignment.pk, text="good idea", seconds=0.5, pasted=True
    )
    judge = people[1]
    handout = next_assignment(annotator=judge, kind="diversity")
    shown = list(
        Response.objects.filter(context=handout.assignment.item.context, system=systems[0]).order_by("pk")
    )
    diversity_submit(
        annotator=judge,
        assignment_id=handout.assignment.pk,
        appropriate=[shown[0].pk, shown[2].pk],
        meanings=2,
        seconds=20.0,
    )
    excluded = people[2]
    excluded.report_inclusion = "exclude"
    excluded.save()
    return AnnotatedStudy(study=study, annotators=people, excluded=excluded)

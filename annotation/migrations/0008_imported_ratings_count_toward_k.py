"""Ratings imported from files count toward k (issue 24): ``Study.count_imported_ratings`` (on by default;
off asks for a fresh collection of k ratings in the app) and, per rating item, how many imported raters
rated its reply (``WorkItem.imported``). Existing rating items get their counts here and want only what
is still missing (never below what annotators hold), as annotation/services/work_items.py keeps them."""

from django.db import migrations, models
from django.db.models import Count


def count_imported_raters(apps, schema_editor):
    Study = apps.get_model("annotation", "Study")
    WorkItem = apps.get_model("annotation", "WorkItem")
    Rating = apps.get_model("annotation", "Rating")
    for study_id, k in Study.objects.values_list("pk", "ratings_per_item"):
        raters = dict(
            Rating.objects.filter(response__context__study_id=study_id, annotator__origin="imported")
            .values("response_id")
            .annotate(raters=Count("annotator_id", distinct=True))
            .values_list("response_id", "raters")
            .order_by()
        )
        if not raters:
            continue
        items = list(WorkItem.objects.filter(study_id=study_id, kind="rate", response_id__in=list(raters)))
        for item in items:
            item.imported = raters[item.response_id]
            item.wanted = max(k - item.imported, item.taken)
        WorkItem.objects.bulk_update(items, ["imported", "wanted"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0007_itemnote_pair_and_system"),
    ]

    operations = [
        migrations.AddField(
            model_name="study",
            name="count_imported_ratings",
            field=models.BooleanField(
                default=True,
                help_text="ratings imported from files count toward k: a reply imported with k raters is "
                "complete and handed to nobody (off: a fresh collection of k ratings per reply in the app)",
            ),
        ),
        migrations.AddField(
            model_name="workitem",
            name="imported",
            field=models.PositiveIntegerField(
                default=0,
                help_text="rating items: raters from imported data who rated the reply; when the study counts "
                "them toward k, wanted is k minus these (annotation/services/work_items.py)",
            ),
        ),
        migrations.RunPython(count_imported_raters, migrations.RunPython.noop),
    ]

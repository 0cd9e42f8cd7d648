"""Work items get a random ``pool_rank``: the assignment engine looks at the study's free items with the
fewest answers, ties in this random order, through the index (study, kind, taken, pool_rank), instead of
sorting every free item of the study on each hand-out (issue 13's load)."""

from django.db import migrations, models

import annotation.models.work

# Existing items: a pseudo-random rank from the id (a multiplicative hash modulo 2**31 - 1), in one
# UPDATE on either database; new items draw theirs with ``secrets`` (annotation.models.work.new_pool_rank).
SPREAD = "UPDATE annotation_workitem SET pool_rank = (id * 48271 + 12345) % 2147483647"


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_data_round_trip"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="workitem",
            name="workitem_pool",
        ),
        migrations.AddField(
            model_name="workitem",
            name="pool_rank",
            field=models.IntegerField(
                default=annotation.models.work.new_pool_rank,
                help_text="random place among the items with as many answers: which of them the hand-out looks at",
            ),
        ),
        migrations.RunSQL(SPREAD, reverse_sql=migrations.RunSQL.noop),
        migrations.AddIndex(
            model_name="workitem",
            index=models.Index(fields=["study", "kind", "taken", "pool_rank"], name="workitem_pool_rank"),
        ),
    ]

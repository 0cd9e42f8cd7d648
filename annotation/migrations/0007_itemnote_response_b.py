"""A note on a pairwise comparison keeps both replies of the pair (``response`` and ``response_b``), so the
researcher sees which pair it was about when a context has three or more systems. Notes left on pairs
before this migration stay on their conversation: which pair they were about was not recorded."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0006_workitem_pool_rank"),
    ]

    operations = [
        migrations.AddField(
            model_name="itemnote",
            name="response_b",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="pair_notes",
                to="annotation.response",
            ),
        ),
        migrations.AddConstraint(
            model_name="itemnote",
            constraint=models.CheckConstraint(
                condition=models.Q(("response_b__isnull", True), ("response__isnull", False), _connector="OR"),
                name="note_pair_has_both_replies",
            ),
        ),
    ]

"""A note on a pairwise comparison keeps both replies of the pair (``response`` and ``response_b``), and a
note on a diversity item the system whose replies were judged (``system``), so the researcher sees which
pair or system it was about when a context has several systems. Notes left on pairs or diversity items
before this migration stay on their conversation: what they were about was not recorded."""

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
        migrations.AddField(
            model_name="itemnote",
            name="system",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="item_notes",
                to="annotation.system",
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

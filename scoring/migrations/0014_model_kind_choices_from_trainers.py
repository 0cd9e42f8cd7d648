# The model kind fields take their choices from the trainer registry (scoring.trainers.model_kind_choices):
# choices only, no change to the database; a kind added later needs no migration.

import scoring.trainers
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0013_help_texts_cite_papers"),
    ]

    operations = [
        migrations.AlterField(
            model_name="studymodelchoice",
            name="kind",
            field=models.CharField(choices=scoring.trainers.model_kind_choices, max_length=20),
        ),
        migrations.AlterField(
            model_name="trainedmodel",
            name="kind",
            field=models.CharField(choices=scoring.trainers.model_kind_choices, max_length=20),
        ),
        migrations.AlterField(
            model_name="trainingjob",
            name="kind",
            field=models.CharField(choices=scoring.trainers.model_kind_choices, max_length=20),
        ),
    ]

"""Word vectors a researcher registers once (a file on the server or an upload), converted into a store named
by the file's sha256, for the embedding metrics (docs/word-vectors.md)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0007_training_jobs_and_metric_origin"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="WordVectorsFile",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.SlugField(max_length=100, unique=True)),
                (
                    "format",
                    models.CharField(
                        choices=[
                            ("word2vec-binary", "word2vec binary (e.g. GoogleNews-vectors-negative300.bin)"),
                            ("word2vec-text", "word2vec text (a '<words> <dimension>' header line)"),
                            ("glove-text", "GloVe text (no header line, e.g. glove.840B.300d.txt)"),
                        ],
                        max_length=20,
                    ),
                ),
                (
                    "source",
                    models.CharField(help_text='what was given: "path: ..." or "upload: <file name>"', max_length=500),
                ),
                (
                    "source_path",
                    models.CharField(
                        help_text="the file converted (an upload is removed once converted)", max_length=1000
                    ),
                ),
                (
                    "store_path",
                    models.CharField(blank=True, help_text="the store folder, once converted", max_length=1000),
                ),
                (
                    "content_hash",
                    models.CharField(blank=True, db_index=True, help_text="sha256 of the file", max_length=64),
                ),
                ("dimension", models.PositiveIntegerField(blank=True, null=True)),
                ("words", models.PositiveIntegerField(blank=True, null=True)),
                ("size_bytes", models.BigIntegerField(blank=True, help_text="the file's size", null=True)),
                ("language", models.CharField(default="en", max_length=10)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "waiting for a worker"),
                            ("converting", "converting"),
                            ("ready", "ready"),
                            ("failed", "failed"),
                        ],
                        db_index=True,
                        default="pending",
                        max_length=12,
                    ),
                ),
                ("progress", models.JSONField(default=dict)),
                ("error", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["name"],
            },
        ),
    ]

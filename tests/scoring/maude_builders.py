"""A small corpus of everyday exchanges and a tiny MaUde configuration, for tests that train MaUde for
real (MiniLM encoder, torch, CPU) in seconds."""

from __future__ import annotations

import random
from pathlib import Path

from scoring.metrics.maude.artifact import MaudeArtifact
from scoring.metrics.maude.training import MaudeConfig, train_maude
from scoring.metrics.ruber.word2vec import Word2VecConfig
from scoring.metrics.training_progress import ProgressCallback

EXCHANGES = [
    ("What time does the train leave ?", "The train leaves at half past five ."),
    ("Could you pass me the salt , please ?", "Sure , here you are ."),
    ("How was your weekend ?", "It was great , we went hiking in the mountains ."),
    ("Do you have this shirt in a larger size ?", "Let me check in the back for you ."),
    ("Where is the nearest bank ?", "It is right across the street from the post office ."),
    ("Would you like some coffee ?", "Yes please , with a little milk ."),
    ("When is your birthday ?", "My birthday is on the third of May ."),
    ("Did you finish the report ?", "Not yet , I will send it to you tonight ."),
    ("How much does this cost ?", "It costs twenty dollars ."),
    ("Can I book a table for two ?", "Of course , for what time ?"),
    ("Is it going to rain today ?", "The forecast says it will be sunny all day ."),
    ("What do you do for a living ?", "I am a teacher at the local school ."),
]
OPENERS = ["Hello there .", "Good morning .", "Excuse me .", "Hi , nice to see you ."]
GREETINGS = [
    "Hello , how can I help you ?",
    "Morning ! What can I do for you ?",
    "Yes ?",
    "Hi ! Good to see you too .",
]


def dialogs(count: int, seed: int) -> list[tuple[str, ...]]:
    generator = random.Random(seed)
    found: list[tuple[str, ...]] = []
    for _ in range(count):
        opener = generator.randrange(len(OPENERS))
        first, second = generator.sample(EXCHANGES, 2)
        found.append((OPENERS[opener], GREETINGS[opener], *first, *second))
    return found


def train_tiny_maude(
    output_dir: Path,
    variants: tuple[str, ...] = ("maude", "bert-nli", "infersent", "ruber"),
    *,
    on_progress: ProgressCallback | None = None,
) -> MaudeArtifact:
    """MaUde (and ``variants``) trained on 120 dialogs of :func:`dialogs`, validated on 16 others."""
    config = MaudeConfig(
        variants=variants,
        word2vec=Word2VecConfig(dimension=16, min_count=1),
        dim=64,
        rnn_hidden=32,
        mlp_hidden=32,
        epochs=6,
        patience=6,
        batch_size=32,
        learning_rate=3e-3,
        device="cpu",
        torch_threads=1,
        corpus_description="synthetic exchanges",
    )
    return train_maude(
        dialogs(120, 1),
        dialogs(16, 2),
        config=config,
        output_dir=output_dir,
        progress=False,
        on_progress=on_progress,
    )

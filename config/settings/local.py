"""`make run`: SQLite file, the local Redis the run script starts, DEBUG on."""

from config.env import env_bool

from .base import *  # noqa: F403

DEBUG = env_bool("DJANGO_DEBUG", True)

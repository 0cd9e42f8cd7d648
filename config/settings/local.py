"""`make run`: SQLite file, the local Redis the run script starts. DEBUG stays off unless asked for
(`DJANGO_DEBUG=1 make run`): volunteers reach this server too, and Django's debug pages show settings and
code. Static files are collected by the run script and served by WhiteNoise either way."""

from config.env import env_bool

from .base import *  # noqa: F403

DEBUG = env_bool("DJANGO_DEBUG", False)

"""The shared kernel: what every app may use and what uses no app (docs/architecture.md)."""

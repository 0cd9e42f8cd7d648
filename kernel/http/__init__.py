"""What every app's HTTP answers share: strict API input, the API's JSON in and out, its error answers, the
rate limits, and which database errors are a 503 rather than a bug. Below every app, so that the apps import
it without importing ``config``, which sits above them all (docs/architecture.md)."""

"""Read operations on studies (HackSoft style): querysets with their joins decided here, not in views."""

"""How many more ratings a study needs, on the annotation page while ratings come in."""

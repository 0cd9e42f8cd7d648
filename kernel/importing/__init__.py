"""The importers' primitives every app uses: files, decoding, problems with file/line/field, CSV rows and
JSON lines, and the length limits of imported identifiers."""

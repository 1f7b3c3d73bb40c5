"""A memory's life: supersession, restatements, edits, retention, export and import, erasure."""

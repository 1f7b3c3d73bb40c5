"""Context block sources: one module per source or small group, registered in `registry.default_sources`.

A source is a class with `type`, `priority`, `ttl_seconds`, `does_io` and `build` (see `base.BlockSource`).
Sources depend on `base` and never on the inject service, which imports them.
"""

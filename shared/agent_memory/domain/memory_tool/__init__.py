"""The memory tool's files and paths."""

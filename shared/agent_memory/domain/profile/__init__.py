"""The user profile: its schema, how it is read from memories, and former field names."""

"""Context injection: Messages arrays, the caller's state, the blocks, their budget and placement, which memories
the user_memory block shows, compaction and summaries of early turns."""

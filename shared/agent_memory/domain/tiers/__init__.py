"""The three-layer memory (L1 conversation log, L2 hot memory, L3 weekly reports): its models and the reports'
drafts."""

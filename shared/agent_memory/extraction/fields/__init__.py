"""One module per group of profile fields; each field's rule and its per-language data live together."""

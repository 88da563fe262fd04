"""Claims layer: the seed documents' numeric and directional claims, each checked against the model."""

"""step layer."""

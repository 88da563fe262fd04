"""formulas layer."""

"""Trinity Desktop: the compute-bandwidth-memory 'AI Trinity' (arXiv 2601.11577) as one linked, computed design space."""

__version__ = "0.1.0"

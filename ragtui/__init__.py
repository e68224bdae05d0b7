"""ragtui: compare RAG evaluation runs in the terminal."""

__version__ = "0.1.0"

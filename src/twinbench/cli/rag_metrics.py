"""`twinbench rag` commands (rag_metrics)."""

from __future__ import annotations

from twinbench.cli.rag import rag_app  # noqa: F401

"""The `twinbench` command line: one module per group of commands, one shared app."""

from twinbench.cli import (  # noqa: F401  (registers commands)
    building,
    files,
    integrations,
    rag,
    reporting,
    running,
)
from twinbench.cli.common import app


def main() -> None:
    """Entry point for `python -m twinbench`."""
    app()


__all__ = ["app", "main"]

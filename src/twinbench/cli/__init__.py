"""The `twinbench` command line: one module per group of commands, one shared app."""

from twinbench.cli import building, files, rag, reporting, running  # noqa: F401  (registers commands)
from twinbench.cli.common import app


def main() -> None:
    """Entry point for `python -m twinbench`."""
    app()


__all__ = ["app", "main"]

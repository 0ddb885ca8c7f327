"""twinbench: benchmarks of unanswerable items with answerable twins, graded exactly."""

__version__ = "0.1.0"

"""Metric kernels (pure functions over numpy columns) and the metrics summary."""

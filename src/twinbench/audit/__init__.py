"""Audits of a benchmark: leakage probes (similarity) and the human audit."""

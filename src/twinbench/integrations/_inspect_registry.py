"""inspect_ai's entry point (`[project.entry-points.inspect_ai]`): importing this module
registers the task `twinbench/abstention`, the solver `twinbench/lettered_decision` and the
scorer `twinbench/exact_rule`.

inspect loads it when a name in the `twinbench/` namespace is not yet registered
(`inspect_ai._util.registry.registry_lookup` → `ensure_entry_points("twinbench")`).
"""

from __future__ import annotations

from twinbench.integrations.inspect import abstention, exact_rule, lettered_decision

__all__ = ["abstention", "exact_rule", "lettered_decision"]

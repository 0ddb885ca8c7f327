"""Where a report's figures come from: the benchmark's provenance and each run's facts.

`benchmark_provenance` reads the benchmark folder's manifest.json (seed, generators and their
versions, the twinbench version that built it, item counts and hashes) and hashes the file
itself; `run_facts` keeps the run.json fields a reader needs to trust a run (status, plan,
package versions). Neither keeps a machine path or anything that names a credential.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from twinbench.jsonl import read_json, sha256_file
from twinbench.runrecord import RunRecord

#: card or run fields never shown, whatever a future system card records
_SECRET = re.compile(r"key|token|secret|password|authorization", re.IGNORECASE)
#: the card fields shown first, in this order; any other field follows, sorted
CARD_ORDER = ("name", "version", "model", "base_url", "url", "precision", "languages")


def benchmark_provenance(folder: Path, items: int) -> dict[str, Any]:
    """The benchmark folder's provenance; `items` is the count of items the report graded."""
    path = folder / "manifest.json"
    manifest = read_json(path)
    generators = [
        {k: g.get(k) for k in ("name", "version", "family", "split", "pairs")}
        for g in manifest.get("generators", [])
    ]
    return {
        "manifest_sha256": sha256_file(path),
        "twinbench_version": manifest.get("twinbench_version"),
        "seed": manifest.get("seed"),
        "generators": generators,
        "items": items,
        "items_sha256": manifest.get("files", {}).get("items.jsonl"),
        "source": manifest.get("source"),
    }


def _plain_url(value: Any) -> Any:
    """A URL without its user info and query (where a password or a key can hide)."""
    if not isinstance(value, str):
        return value
    parts = urlsplit(value)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def shown_fields(card: dict[str, Any]) -> list[tuple[str, Any]]:
    """A system card's (field, value) pairs in display order, with no credential field and
    URLs without user info or query."""
    keys = [k for k in card if not _SECRET.search(k)]
    first = [k for k in CARD_ORDER if k in keys]
    return [
        (k, _plain_url(card[k]) if "url" in k.lower() else card[k])
        for k in first + sorted(set(keys) - set(first))
    ]


def run_facts(record: RunRecord | None) -> dict[str, Any] | None:
    """What run.json says of the run beside its system card (None when it has no run.json)."""
    if record is None:
        return None
    return {
        "status": record.status,
        "seed": record.seed,
        "trials": record.trials,
        "permutations": record.permutations,
        "items_sha256": record.items_sha256,
        "shard": record.shard,
        "source": record.source,
        "versions": {k: v for k, v in record.versions.items() if not _SECRET.search(k)},
    }

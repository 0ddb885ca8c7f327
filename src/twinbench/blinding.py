"""What keeps the label out of what a system receives: opaque request ids and a blind order.

An item's id names its label (`…:u` / `…:t`, the generator, the pair) and `items.jsonl` lists
each unanswerable item just before its twin, so a system sees neither:

- **Opaque ids.** `Request.item_id` is a token: 16 hex digits of a BLAKE2b of the item id keyed
  by 16 bytes from the OS (`secrets`), drawn afresh by every run in every process (a shard, a
  Ray task and a resumed run each draw their own). The key lives only in the runner's memory,
  so nobody can compute a token from `items.jsonl`, and no token reaches a file: the runner maps
  each response back to its item id before writing it. Files stay byte-identical for the same
  inputs because nothing written depends on a token; a system that draws randomness draws it
  from what it is shown and the seed (`always-answer:random`), never from the id.
- **A blind order.** Tasks are sent sorted by a BLAKE2b of (the items' sha256, item id, trial,
  permutation): a pseudo-random order, the same for every run of those items (a batched run is
  byte-identical, shards slice it, `merge` writes it), in which neither an item's position nor
  which member of a pair comes first says anything of its label. The order is public to anyone
  holding `items.jsonl`, as the requests' text is (it can be looked up there): the blinding
  is against a system that sees only its requests.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable

from twinbench.jsonl import InputError
from twinbench.records import Response


def order_key(items_sha256: str, item_id: str, trial: int = 0, permutation: int = 0) -> bytes:
    """The sort key of one task in the blind order (see the module docstring)."""
    return order_keys(items_sha256, (item_id,), trial, permutation)


def order_keys(
    items_sha256: str, item_ids: Iterable[str], trial: int = 0, permutation: int = 0
) -> bytes:
    """`order_key` of (item id, trial, permutation) for each of `item_ids`, 16 bytes each:
    the BLAKE2b of the UTF-8 text `items_sha256 NUL item_id NUL trial NUL permutation`."""
    head, tail = f"{items_sha256}\0".encode(), f"\0{trial}\0{permutation}".encode()
    blake2b = hashlib.blake2b
    return b"".join([blake2b(head + i.encode() + tail, digest_size=16).digest() for i in item_ids])


def _token(key: bytes, item_id: str) -> str:
    return hashlib.blake2b(item_id.encode(), key=key, digest_size=8).hexdigest()


class OpaqueIds:
    """One run's map between item ids and the tokens its system sees as `Request.item_id`."""

    def __init__(self, item_ids: Iterable[str]) -> None:
        ids = sorted(set(item_ids))
        while True:  # two ids on one token (odds ~ n² / 2⁶⁵): draw another key
            key = secrets.token_bytes(16)
            self._item = {_token(key, item_id): item_id for item_id in ids}
            if len(self._item) == len(ids):
                break
        self._token = {item_id: token for token, item_id in self._item.items()}

    def token(self, item_id: str) -> str:
        """The token standing for `item_id` in this run."""
        return self._token[item_id]

    def restore(self, response: Response, system: str) -> Response:
        """`response` with the item id its token stands for (what responses.jsonl records)."""
        item_id = self._item.get(response.item_id)
        if item_id is None:
            raise InputError(
                f"system {system}: a response for {response.item_id!r}, which is not the "
                "item_id of any request this run sent (copy Request.item_id into the Response)"
            )
        return response.model_copy(update={"item_id": item_id})

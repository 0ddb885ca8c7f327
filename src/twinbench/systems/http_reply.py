"""Reading one HTTP reply: decompressed as it streams in, cut just past a byte cap (a gzip
bomb is cut, too), and the wait a `Retry-After` header asks for."""

from __future__ import annotations

import email.utils
import math
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from yarl import URL


@dataclass(frozen=True)
class Got:
    """A reply read to its end, or to just past the read cap."""

    status: int
    headers: Mapping[str, str]  # case-insensitive
    data: bytes
    over_cap: bool


class Undecodable(Exception):
    pass


def _decoder(encoding: str) -> Any:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return zlib.decompressobj()
    raise Undecodable(f"unsupported Content-Encoding {encoding!r}")


async def read_reply(
    session: aiohttp.ClientSession, url: URL, body: bytes, proxy: str | None, cap: int
) -> Got:
    """POST `body` (redirects not followed); read the (decompressed) reply up to `cap` + 1
    bytes."""
    async with session.post(url, data=body, proxy=proxy, allow_redirects=False) as reply:
        decoder = _decoder(reply.headers.get("Content-Encoding", ""))
        chunks: list[bytes] = []
        size = 0
        async for raw in reply.content.iter_any():
            pending = raw
            while pending and size <= cap:
                if decoder is None:
                    piece, pending = pending[: cap + 1 - size], b""
                else:
                    try:
                        piece = decoder.decompress(pending, cap + 1 - size)
                    except zlib.error as exc:
                        raise Undecodable(f"cannot decompress the reply: {exc}") from None
                    pending = decoder.unconsumed_tail
                chunks.append(piece)
                size += len(piece)
            if size > cap:
                break
        return Got(reply.status, reply.headers, b"".join(chunks), size > cap)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds a Retry-After header asks to wait (delay-seconds or an HTTP-date), if any."""
    value = headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if math.isfinite(seconds) else None

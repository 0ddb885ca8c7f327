"""Reading a reply by its wire contract: strict JSON and typed readers for reply values.

Anything a reader refuses raises OffContract, which adapters record as `invalid` (never an
abstention, never coerced: 1.9 is not an option index, "true" is not a boolean).
"""

from __future__ import annotations

import json
import math
from typing import Any


class OffContract(ValueError):
    """A reply value outside the adapter's wire contract (the response becomes `invalid`)."""


def real(value: Any, name: str, low: float = 0.0, high: float = 1.0) -> float:
    """`value` as a float when it is a JSON number (not a bool) in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise OffContract(f"{name} is {value!r}, not a number")
    if not (math.isfinite(value) and low <= value <= high):
        raise OffContract(f"{name} {value!r} is outside [{low:g}, {high:g}]")
    return float(value)


def index(value: Any, name: str, size: int) -> int:
    """`value` when it is a JSON integer (not a bool, not 1.0) in range(size)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise OffContract(f"{name} is {value!r}, not an integer")
    if not 0 <= value < size:
        raise OffContract(f"{name} {value} is out of range for {size} options")
    return value


def flag(value: Any, name: str) -> bool:
    """`value` when it is a JSON boolean."""
    if not isinstance(value, bool):
        raise OffContract(f"{name} is {value!r}, not a boolean")
    return value


def mapping(value: Any, name: str) -> dict[str, Any]:
    """`value` when it is a JSON object."""
    if not isinstance(value, dict):
        raise OffContract(f"{name} is {type(value).__name__}, not an object")
    return value


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _integer(text: str) -> int | float:
    # an integer no 64-bit field holds (nor the record writer) is kept as a float
    value = int(text)
    return value if -(2**63) <= value < 2**63 else float(text)


_DECODER = json.JSONDecoder(parse_constant=_constant, parse_int=_integer)


def loads(data: bytes | str) -> Any:
    """Strict JSON: NaN and Infinity are refused, out-of-range integers become floats."""
    # json.loads(data, parse_constant=..., parse_int=...) without building a decoder per call
    if isinstance(data, str):
        if data.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", data, 0)
    elif isinstance(data, bytes | bytearray):
        data = data.decode(json.detect_encoding(data), "surrogatepass")
    else:
        raise TypeError(f"the JSON object must be str or bytes, not {type(data).__name__}")
    return _DECODER.decode(data)

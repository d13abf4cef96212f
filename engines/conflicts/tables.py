"""A table cell's unit from its column header: price lists write "| Bậc 1 | 6.700 |" under
"Đơn giá (đồng/m³)", and a bare number is not compared (it is a clause label or a count far more
often than a claim). Under a header that names a unit, the cell is an amount of that unit. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

from engines.conflicts.numbers import Quantity, parse_quantities
from engines.conflicts.subjects import column_header

__all__ = ["header_unit", "with_header_units"]

_PARENTHESES = re.compile(r"\(([^()]{1,24})\)")
#: A caption above a table that states its unit: "Đơn vị: đồng/m³, chưa bao gồm thuế", "Unit: VND".
_CAPTION = re.compile(r"(?imu)^[\s*_]*(?:đơn\s+vị(?:\s+tính)?|units?|currency)[\s*_]*:[\s*_]*([^,.;()\n]{1,24})")
_CAPTION_LINES = 3


@lru_cache(maxsize=1024)
def header_unit(header: str) -> Quantity | None:
    """One unit of what ``header`` names ("Đơn giá (đồng/m³)" -> 1 VND; "Giá (triệu đồng)" -> 1,000,000
    VND), read as the number parser reads "1 <unit>"; None when the header names no unit. Kept: a
    table's rows share their headers."""
    for fragment in [*_PARENTHESES.findall(header), header]:
        probe = f"1 {fragment.strip()}"
        found = parse_quantities(probe, skip_small_ints=False)
        if found and found[0].unit and found[0].span[0] == 0:
            return found[0]
    return None


def caption_unit(text: str, start: int) -> Quantity | None:
    """The unit a caption states in the few lines above the table holding ``text[start]``."""
    line_start = text.rfind("\n", 0, start) + 1
    lines = text[:line_start].split("\n")[:-1]
    while lines and lines[-1].lstrip().startswith("|"):  # up to the table's first line
        lines.pop()
    for line in reversed([ln for ln in lines if ln.strip()][-_CAPTION_LINES:]):
        m = _CAPTION.match(line)
        if m:
            return header_unit(m.group(1))
    return None


def _alone_in_cell(text: str, q: Quantity) -> bool:
    """The number is the whole of its table cell (Markdown emphasis aside)."""
    start, end = q.span
    line_start = text.rfind("\n", 0, start) + 1
    if not text[line_start:start].lstrip().startswith("|"):
        return False
    before = text[text.rfind("|", line_start, start) + 1:start]
    after_end = text.find("|", end)
    after = text[end:after_end if after_end >= 0 else len(text)]
    return not before.strip(" *_") and not after.strip(" *_")


def with_header_units(text: str, quantities: Sequence[Quantity]) -> list[Quantity]:
    """``quantities`` with each bare number alone in a table cell given its column header's unit, or
    else the unit a caption above the table states. New objects; the others unchanged."""
    out = []
    for q in quantities:
        unit = None
        if not q.unit and _alone_in_cell(text, q):
            unit = header_unit(column_header(text, q.span[0])) or caption_unit(text, q.span[0])
        if unit is None:
            out.append(q)
            continue
        out.append(replace(q, value=q.value * unit.value, unit=unit.unit, per=unit.per,
                           resolution=q.resolution * unit.value))
    return out

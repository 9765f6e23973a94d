"""One rounding rule for every number a page, a table or a message prints: the value's exact decimal (its float noise
below 1e-9 cleared first, so a difference that is an exact half on its grid reads as one), rounded half away from
zero. Python's own format spec rounds the binary float instead, so −0.35 printed −0.4 while +12.45 printed +12.4."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

NOISE = Decimal("1e-9")   # a float's noise on a page's numbers (points, shares, accuracies) lies far below this


def _decimal(value: float, digits: int) -> Decimal:
    clean = Decimal(repr(float(value))).quantize(NOISE, rounding=ROUND_HALF_EVEN)
    return clean.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)


def fixed(value, digits: int = 1, sign: bool = False) -> str:
    """`value` with `digits` decimals (`sign`: a + before a positive one), as f"{value:+.1f}" writes it but rounded
    by the one rule: fixed(12.45, 1, sign=True) == "+12.5", fixed(-0.35) == "-0.4"."""
    value = float(value)
    if not math.isfinite(value):
        return format(value, "+" if sign else "")
    return ("+" if sign and not str(_decimal(value, digits)).startswith("-") else "") + f"{_decimal(value, digits):f}"


def percent(value, digits: int = 0, sign: bool = False) -> str:
    """A share as a percentage, as f"{value:.0%}" writes it, rounded by the one rule: percent(0.125, 0) == "13%"."""
    value = float(value)
    if not math.isfinite(value):
        return format(value, "+" if sign else "") + "%"
    return fixed(100 * value, digits, sign) + "%"

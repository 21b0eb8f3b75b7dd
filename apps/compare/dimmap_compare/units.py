"""Sizes and numbers as people read them: '256M' <-> 268435456, 12345.6 -> '12.3K'."""
import math

_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text):
    """'4096', '256K', '256M', '4G', '1T' (also KiB/MiB/...; powers of 1024) -> bytes.
    Raises ValueError naming the text otherwise."""
    t = str(text).strip().upper()
    for suffix in ("IB", "B"):
        if t.endswith(suffix) and len(t) > len(suffix) and t[-len(suffix) - 1] in _UNITS:
            t = t[: -len(suffix)]
            break
    mult = 1
    if t and t[-1] in _UNITS:
        mult, t = _UNITS[t[-1]], t[:-1]
    if not t.isdigit() or int(t) == 0:
        raise ValueError(f"'{text}' is not a size (e.g. 512M, 4G)")
    return int(t) * mult


def format_size(nbytes):
    """268435456 -> '256M', 1610612736 -> '1.5G', 1000 -> '1000'."""
    if nbytes is None:
        return "-"
    for suffix in ("T", "G", "M", "K"):
        unit = _UNITS[suffix]
        if nbytes >= unit:
            value = nbytes / unit
            return f"{value:.0f}{suffix}" if value == int(value) or value >= 100 else f"{value:.1f}{suffix}"
    return str(int(nbytes))


def format_number(value):
    """Three significant digits with K/M/G: 12345.6 -> '12.3K', 0.01234 -> '0.0123'."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    magnitude = abs(value)
    for suffix, unit in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if magnitude >= unit:
            return f"{value / unit:.3g}{suffix}"
    return f"{value:.3g}"


def format_megabases(bases):
    """48502 -> '0.05 Mb', 4641652 -> '4.6 Mb': two decimals below 1 Mb, where one would say 0.0."""
    mb = bases / 1e6
    if mb >= 1:
        return f"{mb:.1f} Mb"
    return f"{mb:.2f} Mb" if mb >= 0.01 else f"{mb:.2g} Mb"


def parse_list(text, kind=int):
    """'1,4,16' -> [1, 4, 16]; raises ValueError on an empty or malformed list."""
    items = [s.strip() for s in str(text).split(",") if s.strip()]
    if not items:
        raise ValueError(f"'{text}' is an empty list")
    try:
        values = [kind(s) for s in items]
    except ValueError:
        raise ValueError(f"'{text}' is not a comma-separated list of {kind.__name__} values") from None
    if kind is int and any(v <= 0 for v in values):
        raise ValueError(f"'{text}': counts must be positive")
    return values

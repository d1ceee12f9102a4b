"""Result rows, their targets, and the two renderings: a terminal table and a README markdown block."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal, TypeAlias

__all__ = ["Row", "Unit", "absolute", "faster", "info", "render_markdown", "render_table", "share", "times"]

Unit: TypeAlias = Literal["ns", "per_s", "turn", "count", "bytes", "KiB"]
RatioKind: TypeAlias = Literal["x", "percent", "faster", ""]


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One measured figure, the baseline it is compared with (same run), and the target it must meet.

    ``passed`` is None for figures shown for information (no target).
    """

    section: str
    measure: str
    value: float
    unit: Unit
    baseline: float | None = None
    baseline_label: str = ""
    ratio: float | None = None
    ratio_kind: RatioKind = ""
    target: str = ""
    passed: bool | None = None
    note: str = ""

    @property
    def status(self) -> str:
        return "" if self.passed is None else "PASS" if self.passed else "MISS"

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["status"] = self.status
        return data


def times(
    section: str,
    measure: str,
    value: float,
    unit: Unit,
    baseline: float,
    baseline_label: str,
    *,
    at_most: float | None = None,
    note: str = "",
) -> Row:
    """``value / baseline`` as ``N×`` (lower is better); a target ``≤ at_most×`` when given."""
    ratio = value / baseline if baseline else float("inf")
    return Row(
        section=section,
        measure=measure,
        value=value,
        unit=unit,
        baseline=baseline,
        baseline_label=baseline_label,
        ratio=ratio,
        ratio_kind="x",
        target="" if at_most is None else f"≤ {at_most:g}×",
        passed=None if at_most is None else ratio <= at_most,
        note=note,
    )


def share(
    section: str,
    measure: str,
    rate: float,
    baseline_rate: float,
    baseline_label: str,
    *,
    at_least: float | None = None,
    note: str = "",
) -> Row:
    """A rate as a share of a baseline rate (higher is better); a target ``≥ at_least`` (a fraction)."""
    ratio = rate / baseline_rate if baseline_rate else 0.0
    return Row(
        section=section,
        measure=measure,
        value=rate,
        unit="per_s",
        baseline=baseline_rate,
        baseline_label=baseline_label,
        ratio=ratio,
        ratio_kind="percent",
        target="" if at_least is None else f"≥ {at_least:.0%}",
        passed=None if at_least is None else ratio >= at_least,
        note=note,
    )


def faster(
    section: str,
    measure: str,
    value_ns: float,
    peer_ns: float,
    peer_label: str,
    *,
    at_least: float | None = None,
    note: str = "",
) -> Row:
    """How many times faster than a peer doing the same work (``peer / value``)."""
    ratio = peer_ns / value_ns if value_ns else float("inf")
    return Row(
        section=section,
        measure=measure,
        value=value_ns,
        unit="ns",
        baseline=peer_ns,
        baseline_label=peer_label,
        ratio=ratio,
        ratio_kind="faster",
        target="" if at_least is None else f"≥ {at_least:g}× faster",
        passed=None if at_least is None else ratio >= at_least,
        note=note,
    )


def absolute(section: str, measure: str, value_ns: float, *, at_most_ns: float, note: str = "") -> Row:
    """An absolute cost with an absolute ceiling."""
    return Row(
        section=section,
        measure=measure,
        value=value_ns,
        unit="ns",
        target=f"≤ {format_value(at_most_ns, 'ns')}",
        passed=value_ns <= at_most_ns,
        note=note,
    )


def info(
    section: str,
    measure: str,
    value: float,
    unit: Unit,
    *,
    note: str = "",
    target: str = "",
    passed: bool | None = None,
) -> Row:
    """A figure shown for reference (a baseline, a peer, a diagnostic), or checked against ``target`` by the
    caller (``passed``)."""
    return Row(section=section, measure=measure, value=value, unit=unit, target=target, passed=passed, note=note)


# -- formatting ---------------------------------------------------------------------------------------------


def format_value(value: float, unit: Unit) -> str:
    if unit == "ns":
        if value < 1_000:
            return f"{value:.0f} ns"
        if value < 1_000_000:
            return f"{value / 1_000:.2f} µs"
        return f"{value / 1_000_000:.2f} ms"
    if unit == "per_s":
        if value >= 1_000_000:
            return f"{value / 1_000_000:.2f} M/s"
        if value < 1_000:  # durable runs per second
            return f"{value:.1f}/s"
        return f"{value / 1_000:.0f} k/s"
    if unit == "bytes":
        return f"{value / 1e6:.2f} MB" if value >= 1e5 else f"{value / 1e3:.1f} kB"
    if unit == "turn":  # value: ns per turn
        per_second = 1e9 / value if value else 0.0
        return f"{per_second / 1000:.2f} k/s ({value / 1000:.0f} µs)"
    if unit == "KiB":
        return f"{value / 1024:.1f} MiB" if value >= 10 * 1024 else f"{value:.0f} KiB"
    return f"{value:g}"


def format_ratio(row: Row) -> str:
    if row.ratio is None:
        return ""
    if row.ratio_kind == "percent":
        return f"{row.ratio:.0%}"
    if row.ratio_kind == "faster":
        return f"{row.ratio:.1f}× faster"
    return f"{row.ratio:.2f}×"


def format_baseline(row: Row) -> str:
    if row.baseline is None:
        return ""
    return f"{row.baseline_label} {format_value(row.baseline, row.unit)}".strip()


def _cells(row: Row) -> list[str]:
    return [row.measure, format_value(row.value, row.unit), format_baseline(row), format_ratio(row), row.target]


HEADERS = ["measure", "value", "baseline (same run)", "ratio", "target", "result"]


def render_table(rows: list[Row]) -> str:
    """A fixed-width table, one block per section, notes under the rows they explain."""
    body = [[*_cells(r), r.status] for r in rows]
    widths = [max(len(h), *(len(line[i]) for line in body)) for i, h in enumerate(HEADERS)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    out = [line(HEADERS), line(["-" * w for w in widths])]
    section = None
    for row, cells in zip(rows, body, strict=True):
        if row.section != section:
            section = row.section
            out.append(f"[{section}]")
        out.append(line(cells))
        if row.note:
            out.append(" " * 4 + f"↳ {row.note}")
    return "\n".join(out)


def render_markdown(rows: list[Row], *, command: str, machine: str, peers: list[str]) -> str:
    """The block for the README's performance section."""
    passed = sum(1 for r in rows if r.passed)
    judged = sum(1 for r in rows if r.passed is not None)
    compared = f" Peers: {', '.join(peers)}." if peers else ""
    out = [
        "## Performance",
        "",
        f"Measured with `{command}` on {machine}.{compared}",
        "Every figure is a median over repeated runs, and every ratio is against a baseline measured in the same",
        "run: the machine is shared and noisy, so absolute figures move more than ratios. Targets are those of",
        f"SPEC §10; {passed} of {judged} were met in this run. Reproduce with `pip install -e '.[bench]'` and the",
        "command above, from the repository root.",
        "",
        "| measure | hookloop | baseline (same run) | ratio | target | |",
        "|---|---|---|---|---|---|",
    ]
    section = None
    for row in rows:
        if row.section != section:
            section = row.section
            out.append(f"| **{section}** | | | | | |")
        cells = [*_cells(row), row.status]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out)

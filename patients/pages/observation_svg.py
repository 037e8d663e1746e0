"""The observation chart as SVG, built on the server: the RCP chart's shape, time across and
the parameters down, each value's cell coloured by its score band, the NEWS2 total beneath.

A block holds a day of hourly sets (:data:`PER_BLOCK`); more sets make more blocks, one under
the other, so three days read (and print) as three strips. Nothing depends on colour alone:
every cell writes its value, every cell's ``<title>`` says the parameter, value and score,
oxygen is written "O2" and a set on SpO2 scale 2 is marked "S2" above its column. The table
under the chart on the page holds every value for screen readers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from hisadmin.core.local_time import clock_time, human_date
from patients.domain import observations as rules

PER_BLOCK = 24
LEFT, COL, ROW, HEAD = 150, 38, 26, 46
FILLS = {None: "#ffffff", 0: "#ffffff", 1: "#fff4b3", 2: "#ffd199", 3: "#ffb3b3"}
RISK_FILLS = {"low": "#e6f4e6", "low-medium": "#fff4b3", "medium": "#ffd199",
              "high": "#b30000"}
ROWS = [(name, rules.LABELS[name] + (f" {rules.UNITS[name]}" if name in rules.UNITS else ""))
        for name in rules.SCORED]


def _cell_text(name: str, value: Any) -> str:
    if value is None:
        return ""
    if name == "air_or_oxygen":
        return "Air" if value == "Air" else "O2"
    if name == "systolic_bp":
        return str(value).split("/")[0]
    return str(value)


def _block(rows: Sequence[dict[str, Any]], number: int) -> str:
    width = LEFT + COL * max(1, len(rows))
    height = HEAD + ROW * (len(ROWS) + 1) + 8
    first, last = rows[0]["takenAt"], rows[-1]["takenAt"]
    title = (f"Observation chart, part {number}: {len(rows)} sets from {human_date(first)} "
             f"{clock_time(first)} to {human_date(last)} {clock_time(last)}")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="obs-svg" '
           f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'aria-labelledby="obs-svg-title-{number}">',
           f'<title id="obs-svg-title-{number}">{escape(title)}</title>',
           '<g font-family="system-ui, sans-serif" font-size="12">']
    for i, (_, label) in enumerate([*ROWS, ("total", "NEWS2 total")]):
        y = HEAD + i * ROW
        weight = "bold" if i == len(ROWS) else "normal"
        out.append(f'<text x="6" y="{y + 17}" font-weight="{weight}">{escape(label)}</text>')
    day = ""
    for c, row in enumerate(rows):
        x = LEFT + c * COL
        taken = row["takenAt"]
        date_text = human_date(taken)
        if date_text != day:
            day = date_text
            # near the right edge the day ends at its column, inside the drawing
            anchor, at = ("end", x + COL) if c >= len(rows) - 3 else ("start", x + 2)
            out.append(f'<text x="{at}" y="14" font-size="11" text-anchor="{anchor}">'
                       f"{escape(day)}</text>")
        out.append(f'<text x="{x + 4}" y="30">{escape(clock_time(taken))}</text>')
        if row.get("scale") == 2:
            out.append(f'<text x="{x + 4}" y="42" font-size="10" font-weight="bold">S2</text>')
        for r, cell in enumerate(row["cells"]):
            y = HEAD + r * ROW
            score = cell["score"]
            text = _cell_text(cell["name"], cell["value"])
            value = "not taken" if cell["value"] is None else cell["value"]
            tip = (f"{rules.LABELS[cell['name']]} {value}"
                   + (f", score {score}" if score is not None else ""))
            out.append(f'<g><title>{escape(tip)}</title><rect x="{x}" y="{y}" width="{COL}" '
                       f'height="{ROW}" fill="{FILLS.get(score, "#ffffff")}" stroke="#888"/>'
                       f'<text x="{x + COL / 2}" y="{y + 17}" text-anchor="middle">'
                       f"{escape(text)}</text></g>")
        y = HEAD + len(ROWS) * ROW
        risk = row.get("risk")
        total = str(row["score"]) if row.get("complete") else "–"
        ink = "#ffffff" if risk == "high" else "#000000"
        tip = (f"NEWS2 {row['score']}, {row['risk_label']} risk" if row.get("complete")
               else "Incomplete set: not scored")
        out.append(f'<g><title>{escape(tip)}</title><rect x="{x}" y="{y}" width="{COL}" '
                   f'height="{ROW}" fill="{RISK_FILLS.get(risk or "", "#ffffff")}" '
                   f'stroke="#000"/><text x="{x + COL / 2}" y="{y + 17}" text-anchor="middle" '
                   f'font-weight="bold" fill="{ink}">{total}</text></g>')
    out.append("</g></svg>")
    return "".join(out)


def chart_svg(rows: Sequence[dict[str, Any]]) -> list[SafeString]:
    """One SVG per block of :data:`PER_BLOCK` sets, oldest first (``rows``: the chart's
    rows, :func:`patients.pages.observation_chart.row`, oldest first)."""
    blocks = [rows[i:i + PER_BLOCK] for i in range(0, len(rows), PER_BLOCK)]
    # every value above went through escape(); the markup is ours
    return [mark_safe(_block(b, n + 1)) for n, b in enumerate(blocks)]  # noqa: S308

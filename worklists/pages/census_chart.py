"""The census page's occupancy chart: SVG markup built on the server, no script, no asset.

Readable without colour: the bars are outlined and hatched, every axis is labelled in
words, each bar says its value (in its ``<title>``, and above it when the bars are wide
enough), the line of a full ward is named, and the chart has a ``<title>`` and ``<desc>``
that sum it up. The data table under it on the page holds every number.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from hisadmin.core.local_time import human_date
from worklists.projection.census import CensusDay

WIDTH, HEIGHT = 960, 380
LEFT, RIGHT, TOP, BOTTOM = 72, 24, 44, 72
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
MAX_X_LABELS = 14
VALUE_LABELS_UP_TO = 31  # days; beyond that the bars are too narrow to carry their value


def _short(day: date, with_weekday: bool) -> str:
    text = f"{day.day} {MONTHS[day.month - 1]}"
    return f"{DAYS[day.weekday()]} {text}" if with_weekday else text


def _percent(value: float | None) -> str:
    return "no beds" if value is None else f"{value:g} %"


def summary(days: Sequence[CensusDay]) -> str:
    """The chart in one sentence, for its ``<desc>`` and for screen readers."""
    known = [d for d in days if d.occupancy is not None]
    if not days:
        return "No days to show."
    span = f"from {human_date(days[0].day)} to {human_date(days[-1].day)}"
    if not known and all(d.pending for d in days):
        return f"No midnight has passed yet {span}: no occupancy to show yet."
    if not known:
        return f"The ward has no beds in reference data: no occupancy {span}."
    low = min(known, key=lambda d: (d.occupancy, d.day))
    high = max(known, key=lambda d: (d.occupancy, -d.day.toordinal()))  # the first
    mean = sum(d.occupancy or 0 for d in known) / len(known)
    return (f"Occupancy at midnight {span}: lowest {_percent(low.occupancy)} on "
            f"{human_date(low.day)}, highest {_percent(high.occupancy)} on "
            f"{human_date(high.day)}, on average {mean:.1f} % of {known[-1].beds} beds.")


def occupancy_svg(days: Sequence[CensusDay], title: str) -> SafeString:
    """An SVG bar chart of each day's occupancy at midnight (per cent of the beds)."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    top = max([100.0, *(d.occupancy or 0 for d in days)])
    top = float(25 * -(-top // 25))  # round up to a quarter
    n = max(len(days), 1)
    slot = plot_w / n
    bar = max(slot * 0.7, 1.0)

    def y(value: float) -> float:
        return TOP + plot_h - plot_h * value / top

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'class="census-chart" role="img" aria-labelledby="census-chart-title '
        f'census-chart-desc" font-family="sans-serif" font-size="13">',
        f'<title id="census-chart-title">{escape(title)}</title>',
        f'<desc id="census-chart-desc">{escape(summary(days))}</desc>',
        '<defs><pattern id="census-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#dbe6f0"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#1f4e79" stroke-width="2"/></pattern>'
        '</defs>',
    ]
    tick = 0.0
    while tick <= top:  # horizontal grid lines with their value
        parts.append(f'<line x1="{LEFT}" y1="{y(tick):.1f}" x2="{WIDTH - RIGHT}" '
                     f'y2="{y(tick):.1f}" stroke="#999" stroke-width="0.5"/>'
                     f'<text x="{LEFT - 8}" y="{y(tick) + 4:.1f}" text-anchor="end">'
                     f'{tick:g} %</text>')
        tick += 25
    # The full-ward line, and its key above the plot where no bar's value can cover it.
    parts.append(f'<line x1="{LEFT}" y1="{y(100):.1f}" x2="{WIDTH - RIGHT}" y2="{y(100):.1f}" '
                 'stroke="#000" stroke-width="1.5" stroke-dasharray="8 4"/>'
                 f'<line x1="{WIDTH - RIGHT - 200}" y1="12" x2="{WIDTH - RIGHT - 168}" y2="12" '
                 'stroke="#000" stroke-width="1.5" stroke-dasharray="8 4"/>'
                 f'<text x="{WIDTH - RIGHT}" y="16" text-anchor="end">'
                 'every bed taken (100 %)</text>')
    every = max(1, -(-n // MAX_X_LABELS))
    for i, d in enumerate(days):
        x = LEFT + i * slot + (slot - bar) / 2
        value = d.occupancy or 0
        label = (f"{human_date(d.day)}: its midnight is still to come" if d.pending else
                 f"{human_date(d.day)}: {_percent(d.occupancy)} "
                 f"({d.at_midnight} of {d.beds} beds at midnight)")
        parts.append(f'<g class="census-bar"><title>{escape(label)}</title>'
                     f'<rect x="{x:.1f}" y="{y(value):.1f}" width="{bar:.1f}" '
                     f'height="{TOP + plot_h - y(value):.1f}" fill="url(#census-hatch)" '
                     'stroke="#1f4e79" stroke-width="1"/></g>')
        if n <= VALUE_LABELS_UP_TO and d.occupancy is not None:
            parts.append(f'<text x="{x + bar / 2:.1f}" y="{y(value) - 4:.1f}" '
                         f'text-anchor="middle" font-size="11">{d.occupancy:g}</text>')
        if i % every == 0:
            cx = LEFT + i * slot + slot / 2
            parts.append(f'<text x="{cx:.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">'
                         f'{escape(_short(d.day, n <= 7))}</text>')
    parts += [
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="#000"/>',
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{WIDTH - RIGHT}" y2="{TOP + plot_h}" '
        'stroke="#000"/>',
        f'<text x="{LEFT + plot_w / 2:.0f}" y="{HEIGHT - 20}" text-anchor="middle" '
        'font-weight="bold">Day (the census is taken at midnight, hospital time)</text>',
        f'<text transform="translate(18 {TOP + plot_h / 2:.0f}) rotate(-90)" '
        'text-anchor="middle" font-weight="bold">Beds occupied at midnight (%)</text>',
        '</svg>',
    ]
    return mark_safe("".join(parts))  # noqa: S308 (every text above is escaped)

"""The wristband's and labels' Code 128 barcodes read back as what they were drawn for.

No barcode decoder is installed, so the test decodes the SVG itself: the bars are turned back
into modules from their positions, cut into 11-module symbols, each checked for the shape
every Code 128 symbol has (three bars, three spaces, an even number of bar modules), looked
up in the symbol table (whose first entries and start and stop codes are checked here against
the published ones), read through code sets B and C, and the check symbol recomputed
(weighted sum mod 103). Any bar drawn wrong, missing or moved fails one of those.
"""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET

import pytest
from barcode.charsets.code128 import CODES

from patients.pages.barcodes import (
    MODULE_MM,
    code128_svg,
    order_barcode_text,
    order_id_from_barcode,
    short_order_number,
)

SVG = "{http://www.w3.org/2000/svg}"
STOP = "1100011101011"  # 2331112
START = {"11010000100": "A", "11010010000": "B", "11010011100": "C"}  # 211412 211214 211232


def widths(pattern: str) -> str:
    """A symbol's run lengths (bar, space, bar…), as the standard's tables print them."""
    runs, count = [], 1
    for a, b in zip(pattern, pattern[1:], strict=False):
        if a == b:
            count += 1
        else:
            runs.append(str(count))
            count = 1
    return "".join([*runs, str(count)])


def modules(svg: str, module_mm: float) -> str:
    """The SVG's bars back as a module string (1 = bar), quiet zones left out."""
    bars = [r for r in ET.fromstring(svg).iter(f"{SVG}rect") if r.get("x")]
    mm = sorted((float(r.get("x").removesuffix("mm")), float(r.get("width").removesuffix("mm")))
                for r in bars)
    spans = [(round((x - mm[0][0]) / module_mm), round(w / module_mm)) for x, w in mm]
    out = ["0"] * (spans[-1][0] + spans[-1][1])
    for x, w in spans:
        out[x:x + w] = "1" * w
    return "".join(out)


def decode(svg: str, module_mm: float = MODULE_MM) -> str:
    bits = modules(svg, module_mm)
    assert bits.endswith(STOP)
    body = bits[: -len(STOP)]
    assert len(body) % 11 == 0
    symbols = [body[i:i + 11] for i in range(0, len(body), 11)]
    for s in symbols:  # the shape of every Code 128 symbol
        assert s[0] == "1" and s[-1] == "0" and len(widths(s)) == 6
        assert s.count("1") % 2 == 0
    table = {pattern: value for value, pattern in enumerate(CODES)}
    values = [table[s] for s in symbols]
    *data, check = values
    assert check == sum(v * max(i, 1) for i, v in enumerate(data)) % 103
    charset, text = START[symbols[0]], []
    switches = {"A": {99: "C", 100: "B"}, "B": {99: "C", 101: "A"}, "C": {100: "B", 101: "A"}}
    for v in data[1:]:
        if v in switches[charset]:  # in code set C, 99 is the digits "99"
            charset = switches[charset][v]
        elif charset == "C":
            text.append(f"{v:02d}")
        elif charset == "B":
            text.append(chr(v + 32))
        else:
            text.append(chr(v + 32) if v < 64 else chr(v - 64))
    return "".join(text)


def test_the_symbol_table_starts_as_the_standard_prints_it() -> None:
    assert [widths(CODES[v]) for v in (0, 1, 2, 103, 104, 105)] == [
        "212222", "222122", "222221", "211412", "211214", "211232"]


@pytest.mark.parametrize("mrn", ["H0000001", "WB0042", "MAR001", "A-12-B", "X9"])
def test_it_draws_the_mrn_so_that_it_decodes_to_the_mrn(mrn: str) -> None:
    assert decode(code128_svg(mrn)) == mrn


# Random ids get stable test ids: parallel workers must collect the same tests.
@pytest.mark.parametrize("order_id", [
    pytest.param(str(uuid.uuid4()), id=f"random-{n}") for n in range(20)] + [
    "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "9999a999-9999-4999-9999-999999999999"])
def test_an_order_barcode_decodes_to_its_order_id(order_id: str) -> None:
    text = order_barcode_text(order_id)
    assert len(text) == 40 and text.isdigit()
    assert order_id_from_barcode(decode(code128_svg(text, module_mm=0.2), 0.2)) == order_id
    assert short_order_number(order_id) == order_id.replace("-", "")[:8].upper()


def test_the_svg_is_inline_ready_and_sized_in_millimetres() -> None:
    svg = code128_svg("H0000001", height_mm=11)
    root = ET.fromstring(svg)
    assert svg.startswith("<svg") and "<!DOCTYPE" not in svg and "<!--" not in svg
    assert root.get("height") == "11.000mm" and root.get("width").endswith("mm")
    assert root.get("role") == "img" and root.get("aria-label") == "Barcode of H0000001"
    assert not any(e.get("id") for e in root.iter())  # several on one page: no clashing ids
    assert all(r.get("style") is None and r.get("fill") for r in root.iter(f"{SVG}rect"))

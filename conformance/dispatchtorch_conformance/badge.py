"""A status badge (SVG, shields.io style) for a README: conformant or not, and the
prims that ran on the device."""
from __future__ import annotations

import html


def badge_svg(label: str, value: str, colour: str) -> str:
    lw, vw = 7 * len(label) + 12, 7 * len(value) + 12
    w = lw + vw
    label, value = html.escape(label), html.escape(value)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="20" role="img" '
            f'aria-label="{label}: {value}"><title>{label}: {value}</title>'
            f'<rect width="{lw}" height="20" fill="#555"/>'
            f'<rect x="{lw}" width="{vw}" height="20" fill="{colour}"/>'
            f'<g fill="#fff" text-anchor="middle" font-family="Verdana,sans-serif" '
            f'font-size="11"><text x="{lw / 2}" y="14">{label}</text>'
            f'<text x="{lw + vw / 2}" y="14">{value}</text></g></svg>\n')


def write_badge(report, path):
    p = report.prims
    prims = f"{len(p['on_device'])}/{p['total']} prims"
    if report.conformant:
        value, colour = f"conformant, {prims}", "#4c1"
    else:
        value, colour = f"{len(report.failed)} failing, {prims}", "#e05d44"
    if report.partial:
        value += " (partial)"
    with open(path, "w", encoding="utf-8") as f:
        f.write(badge_svg(f"dispatchtorch {report.backend.get('name', '')}".strip(), value, colour))

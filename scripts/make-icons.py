#!/usr/bin/env python3
"""Draws Klaxon's app icons (a white bell on red) as PNG files in public/icons/.

Standard library only. Shapes are signed-distance functions sampled 4x4 per pixel for smooth
edges. Run from the repository root: python3 scripts/make-icons.py
"""
import math
import os
import struct
import zlib

RED = (185, 28, 28)
WHITE = (255, 255, 255)
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "public", "icons")


def rounded_rect(x, y, cx, cy, hw, hh, r):
    """Signed distance to a rounded rectangle centred at (cx, cy)."""
    qx = abs(x - cx) - hw + r
    qy = abs(y - cy) - hh + r
    outside = math.hypot(max(qx, 0.0), max(qy, 0.0))
    return outside + min(max(qx, qy), 0.0) - r


def circle(x, y, cx, cy, r):
    return math.hypot(x - cx, y - cy) - r


def bell(x, y):
    """Signed distance to the bell glyph in unit coordinates (0..1, centred at 0.5)."""
    # Dome: a circle on top of a body that widens towards the rim.
    dome = circle(x, y, 0.5, 0.42, 0.19)
    top, bottom = 0.42, 0.64
    if top <= y <= bottom:
        t = (y - top) / (bottom - top)
        half = 0.19 + 0.06 * t * t
        body = abs(x - 0.5) - half
    else:
        body = max(top - y, y - bottom)
    rim = rounded_rect(x, y, 0.5, 0.66, 0.29, 0.035, 0.03)
    knob = circle(x, y, 0.5, 0.215, 0.035)
    clapper = circle(x, y, 0.5, 0.75, 0.06)
    return min(dome, body, rim, knob, clapper)


def draw(size, maskable):
    rows = []
    n = 4
    for py in range(size):
        row = bytearray([0])  # filter type: none
        for px in range(size):
            bg = glyph = 0.0
            for sy in range(n):
                for sx in range(n):
                    x = (px + (sx + 0.5) / n) / size
                    y = (py + (sy + 0.5) / n) / size
                    if maskable:
                        # Full bleed; the glyph shrinks into the central safe zone.
                        inside_bg = True
                        gx, gy = 0.5 + (x - 0.5) / 0.72, 0.5 + (y - 0.5) / 0.72
                    else:
                        inside_bg = rounded_rect(x, y, 0.5, 0.5, 0.5, 0.5, 0.2) <= 0
                        gx, gy = x, y
                    if inside_bg:
                        bg += 1
                        if bell(gx, gy) <= 0:
                            glyph += 1
            bg /= n * n
            glyph /= n * n
            a = bg
            if a == 0:
                row += bytes((0, 0, 0, 0))
                continue
            mix = glyph / bg
            r, g, b = (round(RED[i] * (1 - mix) + WHITE[i] * mix) for i in range(3))
            row += bytes((r, g, b, round(a * 255)))
        rows.append(bytes(row))
    return png(size, size, b"".join(rows))


def png(width, height, raw):
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, size, maskable in [
        ("icon-192.png", 192, False),
        ("icon-512.png", 512, False),
        ("maskable-512.png", 512, True),
    ]:
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(draw(size, maskable))
        print("wrote", name)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""tests/reports/render_check.py — load an HTML report in headless Chromium and check the
screenshot is not blank.

Usage: render_check.py REPORT.html [--out shot.png] [--width 1200] [--height 2000]
$FPCERT_CHROMIUM names the browser (default: chromium, chromium-browser or google-chrome on PATH).

Exit 0: rendered, and the picture holds enough ink and colour to be a page (thresholds below);
exit 1: blank or failed; exit 77 (ctest SKIP_RETURN_CODE): no Chromium on this machine, said so.
The PNG is decoded here with zlib (no imaging library needed).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77


def find_chromium():
    env = os.environ.get("FPCERT_CHROMIUM")
    if env is not None:  # the browser to use; a path that does not run means "absent" (skip)
        return env if (os.path.isfile(env) and os.access(env, os.X_OK)) else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def decode_png(data):
    """(width, height, rows of RGB(A) tuples' bytes, channels) for 8-bit RGB/RGBA/grey PNGs."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        ctype = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if ctype == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif ctype == b"IDAT":
            idat += body
        elif ctype == b"IEND":
            break
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or interlace != 0 or ctype not in (0, 2, 6):
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {ctype}, interlace {interlace})")
    ch = {0: 1, 2: 3, 6: 4}[ctype]
    raw = zlib.decompress(idat)
    stride = w * ch
    rows, prev = [], bytearray(stride)
    i = 0
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if f == 1:
            for x in range(ch, stride):
                line[x] = (line[x] + line[x - ch]) & 255
        elif f == 2:
            for x in range(stride):
                line[x] = (line[x] + prev[x]) & 255
        elif f == 3:
            for x in range(stride):
                left = line[x - ch] if x >= ch else 0
                line[x] = (line[x] + ((left + prev[x]) >> 1)) & 255
        elif f == 4:
            for x in range(stride):
                a = line[x - ch] if x >= ch else 0
                b = prev[x]
                c = prev[x - ch] if x >= ch else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if (pa <= pb and pa <= pc) else (b if pb <= pc else c)
                line[x] = (line[x] + pr) & 255
        elif f != 0:
            raise ValueError(f"bad PNG filter {f}")
        rows.append(bytes(line))
        prev = line
    return w, h, rows, ch


def analyse(png):
    w, h, rows, ch = decode_png(png)
    ink = 0
    colours = set()
    coloured = 0  # clearly non-grey pixels (the banner, badges, plot lines)
    step = 2
    n = 0
    for y in range(0, h, step):
        r = rows[y]
        for x in range(0, w, step):
            px = r[x * ch:x * ch + 3] if ch >= 3 else bytes([r[x]] * 3)
            n += 1
            if min(px) < 235:
                ink += 1
            if max(px) - min(px) > 40:
                coloured += 1
            colours.add(px)
    return w, h, ink / n, len(colours), coloured / n


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    html = os.path.abspath(argv[1])
    out, width, height = None, 1200, 2000
    i = 2
    while i < len(argv):
        if argv[i] == "--out":
            out = argv[i + 1]
        elif argv[i] == "--width":
            width = int(argv[i + 1])
        elif argv[i] == "--height":
            height = int(argv[i + 1])
        i += 2
    chromium = find_chromium()
    if not chromium:
        print("SKIPPED: no Chromium found (install the Debian package 'chromium'; scripts/deps.sh --tests tries to)")
        return SKIP
    if not os.path.exists(html):
        print(f"no such report: {html}")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        shot = out or os.path.join(tmp, "shot.png")
        cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
               f"--user-data-dir={os.path.join(tmp, 'profile')}", f"--screenshot={os.path.abspath(shot)}",
               f"--window-size={width},{height}", "file://" + html]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            print("Chromium did not finish within 120 s")
            return 1
        if not os.path.exists(shot):
            print(f"Chromium wrote no screenshot (exit {p.returncode}):\n{p.stderr[-2000:]}")
            return 1
        with open(shot, "rb") as fh:
            png = fh.read()
    w, h, ink, ncol, coloured = analyse(png)
    print(f"render_check: {w}x{h} screenshot, {ink:.1%} of pixels inked, {ncol} distinct colours, "
          f"{coloured:.1%} clearly coloured")
    problems = []
    if (w, h) != (width, height):
        problems.append(f"screenshot is {w}x{h}, asked for {width}x{height}")
    # A blank page is 0% ink and 1 colour; a page of text and plots has several % ink and
    # hundreds of colours (anti-aliasing); a page that is only the banner has < 1% coloured.
    if ink < 0.02:
        problems.append(f"only {ink:.2%} of pixels are not white: blank page?")
    if ncol < 50:
        problems.append(f"only {ncol} distinct colours: no text or plots rendered?")
    if coloured < 0.002:
        problems.append(f"only {coloured:.2%} of pixels carry colour: no banner, badges or plot lines?")
    for pr in problems:
        print(pr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

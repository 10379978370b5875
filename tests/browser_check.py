#!/usr/bin/env python3
"""Open an HTML file in headless Chromium and report what it rendered.

usage: browser_check.py PAGE.html SHOT.png [COLOR...]

Runs Debian's chromium three ways on the page: a screenshot, the DOM after
load (--dump-dom), and Chromium's own network log (--log-net-log). Prints:

  pixels COLOR N      screenshot pixels of each #rrggbb COLOR (+-8 per channel)
  rects N             <rect> elements in the loaded DOM
  svg yes|no          whether the DOM has an <svg>
  request URL         each network request the page started (none expected)

The browser itself talks to Google's update and account services in the
background; those requests carry no document initiator ("not an origin")
and are not the page's. A request the page starts carries its origin
("null" for a file:// page). The PNG is decoded here (8-bit RGB/RGBA, no
interlace: what Chromium writes), so no imaging library is needed.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-default-apps",
    "--window-size=1150,700",
]


def chromium(args, timeout=60):
    return subprocess.run(["chromium"] + CHROMIUM_FLAGS + args,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          timeout=timeout, check=False)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode_png(path):
    """(width, height, channels, rows of bytes) of an 8-bit PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("%s: not a PNG" % path)
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        sys.exit("%s: PNG kind %d/%d/%d not decoded here" % (path, depth, ctype, interlace))
    ch = 3 if ctype == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), w * ch, [], bytearray(w * ch)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - ch] if i >= ch else 0
            b, c = prev[i], prev[i - ch] if i >= ch else 0
            line[i] = (line[i] + (0, a, b, (a + b) // 2, paeth(a, b, c))[f]) & 0xff
        rows.append(line)
        prev = line
    return w, h, ch, rows


def count_colors(path, colors):
    w, h, ch, rows = decode_png(path)
    want = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in colors]
    counts = [0] * len(want)
    for line in rows:
        for x in range(0, w * ch, ch):
            px = line[x:x + 3]
            for k, (r, g, b) in enumerate(want):
                if abs(px[0] - r) <= 8 and abs(px[1] - g) <= 8 and abs(px[2] - b) <= 8:
                    counts[k] += 1
    return counts


def page_requests(netlog):
    """URLs of requests started by a document, not by the browser."""
    d = json.load(open(netlog))
    start = d["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for e in d["events"]:
        p = e.get("params", {})
        if e["type"] == start and "url" in p and p.get("initiator") != "not an origin":
            urls.append(p["url"])
    return urls


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    page, shot, colors = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    url = "file://" + page
    with tempfile.TemporaryDirectory() as tmp:
        netlog = os.path.join(tmp, "net.json")
        chromium(["--screenshot=" + os.path.abspath(shot), url])
        dom = chromium(["--log-net-log=" + netlog, "--dump-dom", url]).stdout.decode("utf-8", "replace")
        if not os.path.exists(shot) or not os.path.exists(netlog):
            sys.exit("chromium wrote no screenshot or network log")
        for c, n in zip(colors, count_colors(shot, colors)):
            print("pixels %s %d" % (c, n))
        print("rects %d" % dom.count("<rect"))
        print("svg %s" % ("yes" if "<svg" in dom else "no"))
        for u in page_requests(netlog):
            print("request %s" % u)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes fuzz_ctxread's seeds: each real payload of corpus/procctx read
the ways a live process serves it (whole; unchanged on the next read;
republished with a torn payload, then whole; a torn re-read three times,
then whole; a failing read), in the input format fuzz_ctxread.c describes.

    python3 tests/fuzz/ctxread_seeds.py   (from the repository's top)
"""
import os
import struct

SRC = "tests/fuzz/corpus/procctx"
DST = "tests/fuzz/corpus/ctxread"


def header(size, at, ctl=0):
    return bytes([ctl]) + struct.pack("<I", size) + bytes([at])


def whole(payload, at):
    """Header, payload and a matching re-read."""
    return header(len(payload), at) + b"\0" + payload + b"\1"


def torn_reread(payload, at, seen):
    return header(len(payload), at) + b"\0" + payload + bytes([seen << 1])


def main():
    os.makedirs(DST, exist_ok=True)
    for name in sorted(os.listdir(SRC)):
        p = open(os.path.join(SRC, name), "rb").read()
        if not p:
            continue
        seeds = {
            "whole": whole(p, 1),
            "unchanged": whole(p, 1) + header(len(p), 1),
            "republished": whole(p, 1) + whole(p[: len(p) // 2], 2) + whole(p, 3),
            "torn": b"".join(torn_reread(p, 5, 6) for _ in range(3)) + whole(p, 7),
            "fails": header(len(p), 1, 0x80) + whole(p, 1) + header(len(p), 2)
            + b"\x80",
        }
        for kind, data in seeds.items():
            with open(os.path.join(DST, f"{name}-{kind}"), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A pprof reader for the tests, written from profile.proto's field numbers
(github.com/google/pprof, proto/profile.proto) and the protobuf wire format
alone, not from tagprof's encoder: repeated scalars are read packed or not,
unknown fields are skipped, as any conforming reader must.

    import pprof_read; p = pprof_read.load("x.pb.gz")
    p.time_nanos, p.samples[i].labels ({key: str or (num, unit)}), ...

As a program: pprof_read.py FILE prints one JSON object per sample:
{"t": ns or null, "values": [...], "labels": {...}, "stack": [leaf first]}.
"""
import gzip
import json
import sys


def varint(b, i):
    shift = v = 0
    while True:
        if i >= len(b):
            raise ValueError("truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def fields(b):
    """(field number, wire type, value) of each field of message b."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("truncated field")
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield num, wt, v


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def scalars(wt, v):
    """A repeated varint field's values: one, or a packed run."""
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


class Sample:
    def __init__(self):
        self.locations, self.values, self.raw_labels = [], [], []


class Profile:
    def __init__(self, raw):
        self.strings, self.samples, self.comments = [], [], []
        self.locations, self.functions = {}, {}
        self.time_nanos = self.duration_nanos = self.period = 0
        for num, wt, v in fields(raw):
            if num == 2:
                self.samples.append(self._sample(v))
            elif num == 4:
                self._location(v)
            elif num == 5:
                f = dict((n, x) for n, _, x in fields(v))
                self.functions[f.get(1, 0)] = f.get(2, 0)
            elif num == 6:
                self.strings.append(v.decode("utf-8", "replace"))
            elif num == 9:
                self.time_nanos = signed(v)
            elif num == 10:
                self.duration_nanos = signed(v)
            elif num == 12:
                self.period = signed(v)
            elif num == 13:
                self.comments += scalars(wt, v)
        for s in self.samples:
            s.labels = {}
            for key, st, n, unit in s.raw_labels:
                k = self.strings[key]
                s.labels[k] = self.strings[st] if st else (n, self.strings[unit])

    def _sample(self, b):
        s = Sample()
        for num, wt, v in fields(b):
            if num == 1:
                s.locations += scalars(wt, v)
            elif num == 2:
                s.values += [signed(x) for x in scalars(wt, v)]
            elif num == 3:
                f = {1: 0, 2: 0, 3: 0, 4: 0}
                for n, _, x in fields(v):
                    f[n] = x
                s.raw_labels.append((f[1], f[2], signed(f[3]), f[4]))
        return s

    def _location(self, b):
        lid, fns = 0, []
        for num, _, v in fields(b):
            if num == 1:
                lid = v
            elif num == 4:
                line = dict((n, x) for n, _, x in fields(v))
                fns.append(line.get(1, 0))
        self.locations[lid] = fns

    def t(self, s):
        """Sample s's time label in ns, or None."""
        v = s.labels.get("t")
        return v[0] if isinstance(v, tuple) and v[1] == "nanoseconds" else None

    def stack(self, s):
        """Function names, leaf first (inlined frames innermost first)."""
        out = []
        for lid in s.locations:
            for fid in self.locations.get(lid, []):
                out.append(self.strings[self.functions.get(fid, 0)])
        return out


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return Profile(data)


if __name__ == "__main__":
    p = load(sys.argv[1])
    for s in p.samples:
        print(json.dumps({"t": p.t(s), "values": s.values, "labels": s.labels,
                          "stack": p.stack(s)}))

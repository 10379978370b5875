#!/usr/bin/env python3
"""A pprof writer for the tests, written from profile.proto's field numbers
(github.com/google/pprof, proto/profile.proto) and the protobuf wire format
alone, not from tagprof's encoder: profiles that no tagprof code wrote,
for the readers' tests (`tagprof report`).

    import pprof_write
    w = pprof_write.Writer([("samples", "count"), ("cpu", "nanoseconds")],
                           period_type=("cpu", "nanoseconds"), period=10**7)
    w.comment("code levels: query > operator > pipeline")
    w.sample(["leaf", "main"], [1, 10**7],
             {"query": "q17", "pipeline": 2, "t": (5000, "nanoseconds")})
    w.save("x.pb.gz")          # gzipped; "x.pb": raw

A label's value is a str (a string label), an int (a numeric label) or a
(number, unit) pair. packed=False writes repeated numbers one field each,
as protobuf allows and readers must accept.
"""
import gzip


def varint(v):
    v &= (1 << 64) - 1          # int64: two's complement, 10 bytes if < 0
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wt, payload):
    return varint(num << 3 | wt) + payload


def num_field(num, v):
    """A varint field; zero is left out, as proto3 writers do."""
    return field(num, 0, varint(v)) if v else b""


def msg_field(num, body):
    return field(num, 2, varint(len(body)) + body)


def repeated(num, values, packed):
    if not values:
        return b""
    if packed:
        return msg_field(num, b"".join(varint(v) for v in values))
    return b"".join(field(num, 0, varint(v)) for v in values)


class Writer:
    def __init__(self, sample_types, period_type=None, period=0,
                 time_nanos=0, duration_nanos=0, packed=True):
        self.strings, self.index = [""], {"": 0}
        self.types = [(self.s(t), self.s(u)) for t, u in sample_types]
        self.period_type = (self.s(period_type[0]), self.s(period_type[1])) \
            if period_type else None
        self.period, self.packed = period, packed
        self.time_nanos, self.duration_nanos = time_nanos, duration_nanos
        self.functions, self.samples, self.comments = {}, [], []

    def s(self, text):
        """text's index in the string table."""
        if text not in self.index:
            self.index[text] = len(self.strings)
            self.strings.append(text)
        return self.index[text]

    def func(self, name):
        """The id of the function (and of its one location) named name."""
        if name not in self.functions:
            self.functions[name] = len(self.functions) + 1
            self.s(name)
        return self.functions[name]

    def comment(self, text):
        self.comments.append(self.s(text))

    def sample(self, stack, values, labels=None):
        """stack: function names, leaf first."""
        if len(values) != len(self.types):
            raise ValueError("%d values for %d types" % (len(values), len(self.types)))
        body = repeated(1, [self.func(f) for f in stack], self.packed)
        body += repeated(2, values, self.packed)
        for key, v in (labels or {}).items():
            lab = num_field(1, self.s(key))
            if isinstance(v, str):
                lab += num_field(2, self.s(v))
            elif isinstance(v, tuple):
                lab += num_field(3, v[0]) + num_field(4, self.s(v[1]))
            else:
                lab += num_field(3, v)
            body += msg_field(3, lab)
        self.samples.append(body)

    def encode(self):
        out = b"".join(msg_field(1, num_field(1, t) + num_field(2, u))
                       for t, u in self.types)
        out += b"".join(msg_field(2, s) for s in self.samples)
        for name, fid in self.functions.items():
            line = num_field(1, fid)
            out += msg_field(4, num_field(1, fid) + num_field(3, 0x1000 + fid)
                             + msg_field(4, line))
            out += msg_field(5, num_field(1, fid) + num_field(2, self.index[name]))
        out += b"".join(msg_field(6, s.encode()) for s in self.strings)
        out += num_field(9, self.time_nanos) + num_field(10, self.duration_nanos)
        if self.period_type:
            out += msg_field(11, num_field(1, self.period_type[0])
                             + num_field(2, self.period_type[1]))
        out += num_field(12, self.period)
        out += repeated(13, self.comments, self.packed)
        return out

    def save(self, path):
        data = self.encode()
        if path.endswith(".gz"):
            data = gzip.compress(data)
        with open(path, "wb") as f:
            f.write(data)

#!/usr/bin/env python3
"""A jitdump writer (and reader) for the tests, written from the Linux
kernel's tools/perf/Documentation/jitdump-specification.txt alone: a second
writer, independent of tests/workloads/jitengine's, and of any reader the
agent has. Native byte order (the spec's files are written so; a reader
detects a foreign order by the magic).

Writes one function's records: a JIT_CODE_DEBUG_INFO (address -> line of a
source file), then its JIT_CODE_LOAD (name, address, size, code index, the
code bytes), then JIT_CODE_CLOSE. The defaults name the code that
tests/workloads/jitdump_map.c spins in (it maps it at 0x200000000000).

    jitdump_write.py OUT [--addr A] [--size N] [--name S] [--src FILE]
                         [--lines N] [--pid N] [--functions N] [BAD...]

Bad inputs (each alone or several):
    --truncate N          cut the file at byte N
    --total-size N        the LOAD record's total_size says N (e.g. 4294967295,
                          or 8: shorter than a record header)
    --huge-code-size      the LOAD's code_size is 2**62 (the bytes written are
                          the real code's; total_size stays consistent with them)
    --huge-nr-entry       the DEBUG_INFO's nr_entry is 2**40 (its entries as
                          written)
    --bad-magic           a magic that is no jitdump's
    --garbage-after N     N random bytes after the last record
    --name-unterminated   the LOAD's name without its NUL (and no code bytes)

    jitdump_write.py --read FILE     prints the records of FILE, one a line
"""
import argparse
import os
import random
import struct
import sys
import time

MAGIC = 0x4A695444          # "JiTD"
VERSION = 1
EM_X86_64 = 62
JIT_CODE_LOAD, JIT_CODE_MOVE, JIT_CODE_DEBUG_INFO, JIT_CODE_CLOSE, \
    JIT_CODE_UNWINDING_INFO = range(5)
NAMES = {0: "LOAD", 1: "MOVE", 2: "DEBUG_INFO", 3: "CLOSE", 4: "UNWINDING_INFO"}

HEADER = struct.Struct("=IIIIIIQQ")     # magic version total_size elf_mach pad1 pid timestamp flags
RECORD = struct.Struct("=IIQ")          # id total_size timestamp
LOAD = struct.Struct("=IIQQQQ")         # pid tid vma code_addr code_size code_index
DEBUG = struct.Struct("=QQ")            # code_addr nr_entry
ENTRY = struct.Struct("=QII")           # code_addr line discrim; then the file name

# What jitdump_map runs: push rbp; mov rbp,rsp; 1: dec rdi; jnz 1b; pop rbp; ret
SPIN = bytes([0x55, 0x48, 0x89, 0xE5, 0x48, 0xFF, 0xCF, 0x75, 0xFB, 0x5D, 0xC3])


def now():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def header(pid, magic=MAGIC):
    return HEADER.pack(magic, VERSION, HEADER.size, EM_X86_64, 0, pid, now(), 0)


def record(rid, payload, total_size=None):
    size = RECORD.size + len(payload) if total_size is None else total_size
    return RECORD.pack(rid, size, now()) + payload


def debug_info(addr, src, lines, step, nr_entry=None):
    ents = b"".join(ENTRY.pack(addr + i * step, i + 1, 0) + src.encode() + b"\0"
                    for i in range(lines))
    return record(JIT_CODE_DEBUG_INFO,
                  DEBUG.pack(addr, lines if nr_entry is None else nr_entry) + ents)


def code_load(pid, addr, code, name, index, code_size=None, total_size=None,
              terminated=True):
    body = LOAD.pack(pid, pid, addr, addr, len(code) if code_size is None else code_size,
                     index) + name.encode() + (b"\0" + code if terminated else b"")
    return record(JIT_CODE_LOAD, body, total_size)


def write(a):
    code = (SPIN + b"\xcc" * a.size)[:a.size]
    out = header(a.pid, 0x12345678 if a.bad_magic else MAGIC)
    step = max(1, a.size // max(1, a.lines))
    for f in range(a.functions):
        addr = a.addr + f * a.size
        name = a.name if a.functions == 1 else "%s_%d" % (a.name, f)
        out += debug_info(addr, a.src, a.lines, step,
                          1 << 40 if a.huge_nr_entry else None)
        out += code_load(a.pid, addr, code, name, f + 1,
                         1 << 62 if a.huge_code_size else None, a.total_size,
                         not a.name_unterminated)
    out += record(JIT_CODE_CLOSE, b"")
    if a.garbage_after:
        out += bytes(random.getrandbits(8) for _ in range(a.garbage_after))
    if a.truncate is not None:
        out = out[:a.truncate]
    with open(a.out, "wb") as f:
        f.write(out)


def cstr(b, i):
    """The NUL-terminated string at b[i:] and the index past its NUL."""
    j = b.index(b"\0", i)
    return b[i:j].decode("ascii", "replace"), j + 1


def read(path):
    """Yields (name, fields) per record; raises ValueError on a bad file."""
    b = open(path, "rb").read()
    if len(b) < HEADER.size:
        raise ValueError("%d bytes: no header" % len(b))
    magic, version, hsize, mach, _, pid, ts, flags = HEADER.unpack_from(b)
    if magic != MAGIC:
        raise ValueError("magic %#x" % magic)
    yield "HEADER", dict(version=version, total_size=hsize, elf_mach=mach, pid=pid,
                         timestamp=ts, flags=flags)
    i = hsize
    while i < len(b):
        if len(b) - i < RECORD.size:
            raise ValueError("%d bytes left at %d: a partial record header" % (len(b) - i, i))
        rid, size, ts = RECORD.unpack_from(b, i)
        if size < RECORD.size or size > len(b) - i:
            raise ValueError("record at %d: total_size %d, %d bytes left" % (i, size, len(b) - i))
        p, end = i + RECORD.size, i + size
        f = dict(timestamp=ts, size=size)
        if rid == JIT_CODE_LOAD:
            f.update(zip(("pid", "tid", "vma", "code_addr", "code_size", "code_index"),
                         LOAD.unpack_from(b, p)))
            f["name"], q = cstr(b, p + LOAD.size)
            if q + f["code_size"] != end:
                raise ValueError("LOAD at %d: name and code end at %d, the record at %d"
                                 % (i, q + f["code_size"], end))
            f["code"] = b[q:end].hex()
        elif rid == JIT_CODE_DEBUG_INFO:
            f["code_addr"], n = DEBUG.unpack_from(b, p)
            q, ents = p + DEBUG.size, []
            for _ in range(n):
                if q + ENTRY.size > end:
                    raise ValueError("DEBUG_INFO at %d: entries past the record" % i)
                addr, line, disc = ENTRY.unpack_from(b, q)
                fname, q = cstr(b, q + ENTRY.size)
                ents.append((addr, line, disc, fname))
            if q != end:
                raise ValueError("DEBUG_INFO at %d: %d bytes after its entries" % (i, end - q))
            f["entries"] = ents
        yield NAMES.get(rid, "id %d" % rid), f
        i = end


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?")
    ap.add_argument("--read", metavar="FILE")
    ap.add_argument("--addr", type=lambda s: int(s, 0), default=0x200000000000)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--name", default="jitdump_map_spin")
    ap.add_argument("--src", default="/nonexistent/jitdump_map.ir")
    ap.add_argument("--lines", type=int, default=4)
    ap.add_argument("--pid", type=int, default=os.getpid())
    ap.add_argument("--functions", type=int, default=1)
    ap.add_argument("--truncate", type=int)
    ap.add_argument("--total-size", type=lambda s: int(s, 0))
    ap.add_argument("--huge-code-size", action="store_true")
    ap.add_argument("--huge-nr-entry", action="store_true")
    ap.add_argument("--bad-magic", action="store_true")
    ap.add_argument("--garbage-after", type=int, default=0)
    ap.add_argument("--name-unterminated", action="store_true")
    a = ap.parse_args()
    if a.read:
        try:
            for name, f in read(a.read):
                print(name, " ".join("%s=%s" % kv for kv in f.items()))
        except ValueError as e:
            sys.exit("%s: %s" % (a.read, e))
        return
    if not a.out:
        ap.error("OUT or --read FILE")
    write(a)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes a static x86-64 executable with a huge symbol table and a huge
.eh_frame, for tests/e2e/huge_inputs.sh, without a compiler or linker.

    huge_elf.py OUT [--functions N] [--fde-bytes B] [--spin I]

N functions (default 1,000,000) named hf_0000000, hf_0000001... in .symtab,
16 bytes of code each (push rbp; mov rbp, rsp; pop rbp; ret), with one FDE
of B bytes each (default 100: real CFA rules, then DW_CFA_nop padding) in
.eh_frame and its binary-search table in .eh_frame_hdr. The entry point is
function I (default 500007), whose code is `jmp .`: the process spins
there forever, so every sample of it names hf_%07d % I. With the defaults:
24 MB of .symtab, 11 MB of .strtab, 100 MB of .eh_frame, 8 MB of
.eh_frame_hdr, 16 MB of code: a 160 MB file, written in a few seconds.

The GNU build ID is a hash of N, B and I: the same arguments give the same
file.
"""
import argparse
from array import array
import hashlib
import os
import struct
import sys

BASE = 0x400000
FUNC = 16

PF_X, PF_W, PF_R = 1, 2, 4
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOTE = 1, 2, 3, 7
SHF_ALLOC, SHF_EXECINSTR = 2, 4


def align(x, a):
    return (x + a - 1) & -a


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--functions", type=int, default=1000000)
    ap.add_argument("--fde-bytes", type=int, default=100)
    ap.add_argument("--spin", type=int, default=500007)
    a = ap.parse_args()
    n, fde_len = a.functions, a.fde_bytes
    if not 1 <= n <= 10000000 or not 0 <= a.spin < n or fde_len < 28 or fde_len % 4:
        sys.exit("huge_elf: need 0 <= spin < functions <= 10^7 (names of 7 "
                 "digits), fde-bytes >= 28 and a multiple of 4")

    # ---- layout (file offset = vaddr - BASE: one PT_LOAD from 0) ----
    ehdr_size, phnum, shnum = 64, 4, 8
    note_off = align(ehdr_size + phnum * 56, 4)
    note_size = 16 + 20
    text_off = align(note_off + note_size, 16)
    text_size = n * FUNC
    ehf_off = align(text_off + text_size, 8)
    cie_size = 24
    ehf_size = cie_size + n * fde_len + 4	# ends with a zero terminator
    hdr_off = align(ehf_off + ehf_size, 4)
    hdr_size = 12 + 8 * n
    load_end = hdr_off + hdr_size
    sym_off = align(load_end, 8)
    sym_size = (n + 1) * 24
    str_off = sym_off + sym_size
    names = b"\0" + b"".join(b"hf_%07d\0" % i for i in range(n))
    shstr = (b"\0.note.gnu.build-id\0.text\0.eh_frame\0.eh_frame_hdr\0"
             b".symtab\0.strtab\0.shstrtab\0")
    shstr_off = str_off + len(names)
    sh_off = align(shstr_off + len(shstr), 8)
    total = sh_off + shnum * 64
    vaddr = lambda off: BASE + off
    text_va, ehf_va, hdr_va = vaddr(text_off), vaddr(ehf_off), vaddr(hdr_off)

    buf = bytearray(total)

    # ---- ELF header and program headers ----
    ident = b"\x7fELF\x02\x01\x01" + bytes(9)
    struct.pack_into("<16sHHIQQQIHHHHHH", buf, 0, ident, 2, 62, 1,
                     text_va + a.spin * FUNC, ehdr_size, sh_off, 0,
                     ehdr_size, 56, phnum, 64, shnum, shnum - 1)
    ph = [
        (1, PF_R | PF_X, 0, BASE, BASE, load_end, load_end, 0x1000),
        (4, PF_R, note_off, vaddr(note_off), vaddr(note_off), note_size,
         note_size, 4),
        (0x6474E550, PF_R, hdr_off, hdr_va, hdr_va, hdr_size, hdr_size, 4),
        (0x6474E551, PF_R | PF_W, 0, 0, 0, 0, 0, 16),
    ]
    for i, p in enumerate(ph):
        struct.pack_into("<IIQQQQQQ", buf, ehdr_size + 56 * i, *p)

    # ---- build ID ----
    bid = hashlib.sha1(b"huge_elf %d %d %d" % (n, fde_len, a.spin)).digest()
    struct.pack_into("<III4s20s", buf, note_off, 4, 20, 3, b"GNU\0", bid)

    # ---- code: every function the same, but the one that spins ----
    body = bytes([0x55, 0x48, 0x89, 0xE5, 0x5D, 0xC3]) + b"\x90" * 10
    buf[text_off:text_off + text_size] = body * n
    spin = text_off + a.spin * FUNC
    buf[spin:spin + 2] = b"\xeb\xfe"			# jmp .

    # ---- .eh_frame: a CIE, then one FDE per function ----
    cie = (struct.pack("<I", 0) + b"\x01zR\0" + uleb(1) + b"\x78" +
           uleb(16) + uleb(1) + b"\x1b" +		# pcrel | sdata4
           b"\x0c\x07\x08" + b"\x90\x01")		# cfa = rsp+8; rip at cfa-8
    cie = cie + b"\0" * (cie_size - 4 - len(cie))
    buf[ehf_off:ehf_off + cie_size] = struct.pack("<I", len(cie)) + cie
    rules = (b"\x00" +				# no augmentation data
             b"\x41\x0e\x10\x86\x02" +		# push rbp: cfa+16, rbp at -16
             b"\x43\x0d\x06")			# mov rbp, rsp: cfa = rbp+16
    fde = struct.pack("<IIiI", fde_len - 4, 0, 0, FUNC) + rules
    fde = fde + b"\0" * (fde_len - len(fde))	# DW_CFA_nop
    first = ehf_off + cie_size
    buf[first:first + n * fde_len] = fde * n
    # The fields that differ from FDE to FDE step by the same amount each
    # time: written as strided int32 runs, not one by one (seconds, not
    # tens of seconds). CIE pointer: back from its own field to the CIE;
    # pc_begin: pc-relative to its own field.
    words = memoryview(buf).cast("i")
    w, step = first // 4, fde_len // 4
    words[w + 1:w + 1 + n * step:step] = array(
        "i", range(first + 4 - ehf_off, first + 4 - ehf_off + n * fde_len,
                   fde_len))
    pc0 = text_va - vaddr(first + 8)
    words[w + 2:w + 2 + n * step:step] = array(
        "i", range(pc0, pc0 + n * (FUNC - fde_len), FUNC - fde_len))
    # the 4 zero bytes after the last FDE end the section

    # ---- .eh_frame_hdr: the FDEs by address, relative to the header ----
    struct.pack_into("<BBBBiI", buf, hdr_off, 1, 0x1B, 0x03, 0x3B,
                     ehf_va - (hdr_va + 4), n)
    w = (hdr_off + 12) // 4
    words[w:w + 2 * n:2] = array("i", range(text_va - hdr_va,
                                            text_va - hdr_va + n * FUNC, FUNC))
    f0 = vaddr(first) - hdr_va
    words[w + 1:w + 1 + 2 * n:2] = array("i", range(f0, f0 + n * fde_len,
                                                    fde_len))

    # ---- .symtab and .strtab ----
    # GLOBAL FUNC symbols in .text, 16 bytes each, names 11 bytes apart
    sym = struct.pack("<IBBHQQ", 0, 0x12, 0, 2, 0, FUNC)
    buf[sym_off + 24:sym_off + 24 * (n + 1)] = sym * n
    w = (sym_off + 24) // 4
    words[w:w + 6 * n:6] = array("i", range(1, 1 + 11 * n, 11))
    quads = memoryview(buf).cast("q")
    q = (sym_off + 24 + 8) // 8
    quads[q:q + 3 * n:3] = array("q", range(text_va, text_va + n * FUNC,
                                            FUNC))
    buf[str_off:str_off + len(names)] = names
    buf[shstr_off:shstr_off + len(shstr)] = shstr

    # ---- section headers ----
    def name(s):
        return shstr.index(b"\0" + s + b"\0") + 1
    sh = [
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        (name(b".note.gnu.build-id"), SHT_NOTE, SHF_ALLOC, vaddr(note_off),
         note_off, note_size, 0, 0, 4, 0),
        (name(b".text"), SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text_va,
         text_off, text_size, 0, 0, 16, 0),
        (name(b".eh_frame"), SHT_PROGBITS, SHF_ALLOC, ehf_va, ehf_off,
         ehf_size, 0, 0, 8, 0),
        (name(b".eh_frame_hdr"), SHT_PROGBITS, SHF_ALLOC, hdr_va, hdr_off,
         hdr_size, 0, 0, 4, 0),
        (name(b".symtab"), SHT_SYMTAB, 0, 0, sym_off, sym_size, 6, 1, 8, 24),
        (name(b".strtab"), SHT_STRTAB, 0, 0, str_off, len(names), 0, 0, 1, 0),
        (name(b".shstrtab"), SHT_STRTAB, 0, 0, shstr_off, len(shstr), 0, 0,
         1, 0),
    ]
    for i, s in enumerate(sh):
        struct.pack_into("<IIQQQQIIQQ", buf, sh_off + 64 * i, *s)

    with open(a.out, "wb") as f:
        f.write(buf)
    os.chmod(a.out, 0o755)


if __name__ == "__main__":
    main()

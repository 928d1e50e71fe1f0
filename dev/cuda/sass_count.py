#!/usr/bin/env python3
"""sass_count.py - static instruction counts of sm_90 cubins, without a GPU or cuobjdump.

Reads the ELF sections .text.<kernel> of a cubin (nvcc -cubin -gencode arch=compute_90,code=sm_90)
and decodes from each 128-bit instruction only what the counts need: the opcode (bits 0-8),
the operand form (bits 9-11), the .X flag of IADD3 and IMAD (bit 74), and src0 (bits 24-31), an
IMAD whose src0 is RZ being a move (IMAD.MOV). Per kernel it prints:
  instr  instructions, without the trailing NOP padding
  imad   IMAD-pipe units: IMAD.WIDE and IMAD.HI (the full 64-bit product) 2, every other IMAD
         form 1 (IMAD.MOV and IMAD.X too)
  mov    register moves: MOV and IMAD.MOV
and the same for each out-of-line function inside the kernel (a region that ends in RET).

The unit model: on the H200 the Montgomery products run on the IMAD pipe (Nsight: the math
pipe throttle is the top stall), at half the rate of issue, an IMAD.WIDE or IMAD.HI taking the
pipe twice. Four measured products (8-limb mul_eo and mul_shoup, 12-limb mul_eo and mul_sos) run
at 90-93 % of twice their units in cycles (dev/cuda/NOTES.md, study 14).

  sass_count.py A.cubin [PATTERN ...]           counts of the kernels whose names contain a PATTERN
  sass_count.py A.cubin B.cubin [PATTERN ...]   the same, A -> B (the same kernels built two ways)
"""
import collections
import struct
import subprocess
import sys

NAMES = {
    0x002: "MOV", 0x007: "SEL", 0x00C: "ISETP", 0x010: "IADD3", 0x011: "LEA", 0x012: "LOP3",
    0x016: "PRMT", 0x019: "SHF", 0x024: "IMAD", 0x025: "IMAD.WIDE", 0x027: "IMAD.HI",
    0x118: "NOP", 0x119: "S2R", 0x11D: "BAR", 0x143: "CALL", 0x144: "CALL", 0x147: "BRA",
    0x14D: "EXIT", 0x150: "RET", 0x181: "LDG", 0x182: "LDC", 0x184: "LDS", 0x186: "STG",
    0x188: "STS", 0x189: "SHFL",
}
IMAD_OPS = (0x024, 0x025, 0x027)


def text_sections(path):
    """{section name: bytes} of an ELF64 file's .text sections"""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit("%s: not an ELF64 file (a cubin from nvcc -cubin?)" % path)
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = secs[shstrndx][4]
    out = {}
    for name, _typ, _flags, _addr, off, size in secs:
        n = data[strtab + name:data.index(b"\0", strtab + name)].decode()
        if n.startswith(".text."):
            out[n[6:]] = data[off:off + size]
    return out


def decode(code):
    """the instruction names of a .text section"""
    names = []
    for i in range(0, len(code) - 15, 16):
        lo, hi = struct.unpack_from("<QQ", code, i)
        op, form = lo & 0x1FF, (lo >> 9) & 7
        name = NAMES.get(op, "op%03x" % op)
        if op in IMAD_OPS + (0x010,) and (hi >> 10) & 1:
            name += ".X"
        if op == 0x024 and (lo >> 24) & 0xFF == 0xFF and form in (1, 4):
            name = "IMAD.MOV"
        names.append(name)
    while names and names[-1] == "NOP":
        names.pop()
    return names


def stats(names):
    c = collections.Counter(names)
    imad = sum(v * (2 if "WIDE" in k or "HI" in k else 1) for k, v in c.items() if k.startswith("IMAD"))
    return len(names), imad, c["MOV"] + c["IMAD.MOV"]


def functions(names):
    """(start, names) of each out-of-line function: the code after the last branch, exit or
    return before a RET, up to that RET"""
    out = []
    for r, n in enumerate(names):
        if n != "RET":
            continue
        s = r
        while s > 0 and names[s - 1] not in ("BRA", "EXIT", "RET"):
            s -= 1
        while names[s] == "NOP":
            s += 1
        out.append((s, names[s:r + 1]))
    return out


def demangle(n):
    try:
        return subprocess.run(["c++filt", n], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return n


def fmt(a, b):
    return "%6d" % a if b is None else "%6d -> %6d" % (a, b)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    files = [a for a in argv[1:3] if a.endswith(".cubin")]
    pats = argv[1 + len(files):]
    secs = [text_sections(f) for f in files]
    print("%-64s %-16s %-16s %-16s" % ("kernel (function at instruction)", "instr", "imad units", "moves"))
    for name in sorted(secs[0]):
        dn = demangle(name)
        if pats and not any(p in dn for p in pats):
            continue
        na = decode(secs[0][name])
        nb = decode(secs[1][name]) if len(secs) > 1 and name in secs[1] else None
        sa, sb = stats(na), stats(nb) if nb is not None else (None,) * 3
        print("%-64s %-16s %-16s %-16s" % (dn[:64], fmt(sa[0], sb[0]), fmt(sa[1], sb[1]), fmt(sa[2], sb[2])))
        fa, fb = functions(na), functions(nb) if nb is not None else []
        for k, (start, body) in enumerate(fa):
            ta = stats(body)
            tb = stats(fb[k][1]) if k < len(fb) else (None,) * 3
            print("%-64s %-16s %-16s %-16s" % ("  function at %d" % start, fmt(ta[0], tb[0]), fmt(ta[1], tb[1]),
                                                fmt(ta[2], tb[2])))


if __name__ == "__main__":
    main(sys.argv)

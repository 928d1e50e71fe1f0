#!/usr/bin/env python3
"""emu_cu.py SRC DST - rewrites the kernel launches of a CUDA source file into calls of the
emulated runtime (dev/cuda/emu_rt/cuda_runtime.h), so that g++ compiles it for the CPU:

    kern<T><<<grid, block, smem, stream>>>(a, b);   ->   emu_launch(emu_cfg(grid, block, smem, stream), "kern<T>", kern<T>, a, b);

The kernel expression is the name (with its template arguments) just before <<<; the rest of
the file is copied as it is, so line numbers stay those of the source."""
import sys


def kernel_start(s, i):
    """index where the kernel expression ending just before s[i] starts"""
    j = i
    while j > 0 and s[j - 1].isspace():
        j -= 1
    if s[j - 1] == '>':  # template arguments: back to the matching '<'
        depth = 0
        while True:
            j -= 1
            c = s[j]
            if c == '>':
                depth += 1
            elif c == '<':
                depth -= 1
                if depth == 0:
                    break
    while j > 0 and (s[j - 1].isalnum() or s[j - 1] in '_:'):
        j -= 1
    return j


def matching(s, i, open_c, close_c):
    """index just past the bracket closing the one at s[i]"""
    depth = 0
    while True:
        c = s[i]
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1


def rewrite(s):
    out = []
    pos = 0
    while True:
        i = s.find('<<<', pos)
        if i < 0:
            out.append(s[pos:])
            return ''.join(out)
        k0 = kernel_start(s, i)
        kern = s[k0:i].rstrip()
        e = s.find('>>>', i)
        cfg = s[i + 3:e]
        p = e + 3
        while s[p].isspace():
            p += 1
        if s[p] != '(':
            raise SystemExit('emu_cu.py: no argument list after >>> at offset %d' % e)
        q = matching(s, p, '(', ')')
        args = s[p + 1:q - 1]
        gap = s[i:e].count('\n') + s[e:p].count('\n')  # keep the line count
        out.append(s[pos:k0])
        out.append('emu_launch(emu_cfg(%s), "%s", %s%s%s)' % (cfg, ' '.join(kern.split()), kern, ', ' if args.strip() else '',
                                                           args) + '\n' * gap)
        pos = q


if __name__ == '__main__':
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as f:
        text = f.read()
    with open(dst, 'w') as f:
        f.write('#line 1 "%s"\n' % src + rewrite(text))

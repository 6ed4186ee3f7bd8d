#!/usr/bin/env python3
"""Turns values in Futhark's binary data format (docs/data.md), as
`funmem dataset -b` writes them, into the input files of Rodinia's OpenCL
programs, so that scripts/bench-rodinia runs them on the very values that
our benchmarks use.

    fdata.py lines  IN K OUT   the K-th array of IN, one element a line
                               (HotSpot's temperature and power files)
    fdata.py kmeans IN K OUT   the K-th array of IN, [n][d] f32, as k-means'
                               binary input (-b): int32 n, int32 d, the
                               floats row by row
    fdata.py pgm    IN K OUT   the K-th array of IN, [rows][cols] f32 in
                               [0, 1], as a plain PGM (P2) of 0..255 grey
                               levels, row by row (SRAD's image.pgm)
    fdata.py shapes IN         each value's rank, type and shape, a line each

K counts the arrays of IN from 0; scalars (rank 0) are skipped, so IN may
be a whole program input (sizes first) or its arrays alone. Python's
standard library only. Exit code 2 on bad input or usage.
"""

import array
import struct
import sys

TYPES = {b" i32": "i", b" i64": "q", b" f32": "f", b" f64": "d", b"bool": "b"}


def fail(msg):
    print(f"fdata.py: {msg}", file=sys.stderr)
    sys.exit(2)


def values(path):
    """Yields (type name, shape, array of elements or None when skipped)
    for each value of the file, lazily."""
    with open(path, "rb") as f:
        index = 0
        while True:
            head = f.read(7)
            if not head:
                return
            if len(head) < 7 or head[0:1] != b"b" or head[1] != 2:
                fail(f"{path}: value {index} is not in Futhark's binary format (version 2)")
            rank = head[2]
            code = TYPES.get(head[3:7])
            if code is None:
                fail(f"{path}: value {index} has an unknown element type {head[3:7]!r}")
            dims = f.read(8 * rank)
            if len(dims) < 8 * rank:
                fail(f"{path}: value {index} is cut off in its shape")
            shape = list(struct.unpack(f"<{rank}Q", dims))
            count = 1
            for d in shape:
                count *= d
            elems = array.array(code)
            data = f.read(count * elems.itemsize)
            if len(data) < count * elems.itemsize:
                fail(f"{path}: value {index} is cut off in its elements")
            elems.frombytes(data)
            if sys.byteorder == "big":
                elems.byteswap()
            yield head[3:7].decode().strip(), shape, elems
            index += 1


def nth_array(path, k):
    seen = 0
    for ty, shape, elems in values(path):
        if shape:
            if seen == k:
                return ty, shape, elems
            seen += 1
    fail(f"{path}: has {seen} arrays, no array number {k}")


def main(argv):
    if len(argv) == 3 and argv[1] == "shapes":
        for ty, shape, _ in values(argv[2]):
            print("".join(f"[{d}]" for d in shape) + ty)
        return
    if len(argv) != 5 or argv[1] not in ("lines", "kmeans", "pgm"):
        fail("usage: fdata.py lines|kmeans|pgm IN K OUT, or fdata.py shapes IN")
    mode, src, k, out = argv[1], argv[2], argv[3], argv[4]
    if not k.isdigit():
        fail(f"K must be a number, not {k!r}")
    ty, shape, elems = nth_array(src, int(k))
    if mode == "lines":
        with open(out, "w") as f:
            if ty in ("f32", "f64"):
                f.write("".join(f"{x:.9g}\n" for x in elems))
            else:
                f.write("".join(f"{x}\n" for x in elems))
    elif mode == "kmeans":
        if ty != "f32" or len(shape) != 2:
            fail(f"k-means wants a [n][d]f32 array, not {''.join(f'[{d}]' for d in shape)}{ty}")
        with open(out, "wb") as f:
            f.write(struct.pack("<ii", shape[0], shape[1]))
            if sys.byteorder == "big":
                elems.byteswap()
            elems.tofile(f)
    else:
        if ty not in ("f32", "f64") or len(shape) != 2:
            fail(f"a PGM wants a [rows][cols] float array, not {''.join(f'[{d}]' for d in shape)}{ty}")
        rows, cols = shape
        with open(out, "w") as f:
            f.write(f"P2\n{cols} {rows}\n255\n")
            for r in range(rows):
                row = elems[r * cols : (r + 1) * cols]
                f.write(" ".join(str(min(255, max(0, round(x * 255)))) for x in row) + "\n")


if __name__ == "__main__":
    main(sys.argv)

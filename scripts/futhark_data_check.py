#!/usr/bin/env python3
"""Cross-checks funmem's data formats against the futhark-data package.

Usage: futhark_data_check.py FUNMEM

Both directions, for every element type funmem has and ranks 0 to 3,
empty arrays, NaN and infinities included:
  - futhark-data writes values (binary, and text); funmem reads them
    (`funmem dataset` converts them to text and to binary); futhark-data
    reads funmem's output back and finds the same values, and funmem's
    binary is byte for byte futhark-data's;
  - funmem generates values (`funmem dataset -g`) in text and in binary;
    futhark-data reads both, finds the same values of the asked types and
    shapes, and writes the same binary bytes.
Exits 1 on the first disagreement, saying what it was.
"""
import io
import subprocess
import sys

import numpy as np
import futhark_data as fd

FUNMEM = sys.argv[1]
# futhark-data's text writer names `np.bool` (gone in numpy 1.24 to 1.26)
# and calls `np.product` (gone in numpy 2): with numpy < 2, give it the one.
if not hasattr(np, "bool") or np.bool is not np.bool_:
    np.bool = np.bool_
TYPES = {"bool": np.bool_, "i32": np.int32, "i64": np.int64, "f32": np.float32, "f64": np.float64}


def funmem(args, data):
    r = subprocess.run([FUNMEM, "dataset"] + args, input=data, capture_output=True)
    if r.returncode != 0:
        fail("funmem dataset %s exited %d: %s" % (" ".join(args), r.returncode, r.stderr.decode()))
    return r.stdout


def fail(msg):
    print("futhark-data check: " + msg)
    sys.exit(1)


def same(a, b):
    """Same type, shape and elements (NaN equal to NaN, -0.0 not 0.0)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        return bool(np.all((a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))))
    return bool(np.all(a == b))


def describe(v):
    return "%s%s" % ("".join("[%d]" % d for d in np.shape(v)), np.asarray(v).dtype)


def samples():
    """Values of every type and rank 0..3; floats exact at 6 decimals, so
    that futhark-data's text writer (`%.6f`) does not round them."""
    rng = np.random.default_rng(1)
    vals = [
        np.int32(-7), np.int32(2**31 - 1), np.int64(-2**63), np.int64(2**62 + 3),
        np.float32(1.5), np.float32(np.nan), np.float32(-np.inf), np.float64(-0.25),
        np.float64(np.inf), np.float64(np.nan), np.bool_(True), np.bool_(False),
    ]
    for name, t in TYPES.items():
        for shape in [(3,), (2, 3), (2, 1, 2), (0,), (2, 0), (0, 3, 2), (1, 0, 1)]:
            n = int(np.prod(shape))
            if name == "bool":
                a = rng.integers(0, 2, n).astype(np.bool_)
            elif name.startswith("i"):
                info = np.iinfo(t)
                a = rng.integers(info.min, info.max, n, dtype=t, endpoint=True)
            else:
                a = (rng.integers(-4000, 4000, n) / 8).astype(t)
                if n >= 3:
                    a[:3] = [np.nan, np.inf, -np.inf]
            vals.append(a.reshape(shape))
    return vals


def check_they_write_we_read():
    vals = samples()
    theirs_bin = b"".join(bytes(fd.dumpb(v)) for v in vals)
    # funmem reads their binary, writes text and binary.
    our_bin = funmem(["-b"], theirs_bin)
    # futhark-data's text reader does not read `f32.nan` or `-f64.inf`
    # (its writer writes them): funmem's text of those is checked by funmem
    # reading futhark-data's text below.
    plain = [v for v in vals if not (np.asarray(v).dtype.kind == "f" and not np.all(np.isfinite(v)))]
    plain_bin = b"".join(bytes(fd.dumpb(v)) for v in plain)
    back = list(fd.loads(funmem([], plain_bin).decode()))
    if len(back) != len(plain):
        fail("funmem's text of futhark-data's binary has %d values, not %d" % (len(back), len(plain)))
    for v, w in zip(plain, back):
        if not same(v, w):
            fail("futhark-data wrote %s %r; funmem's text of it reads back as %s %r" % (describe(v), v, describe(w), w))
    if our_bin != theirs_bin:
        k = next(i for i in range(min(len(our_bin), len(theirs_bin)) + 1) if our_bin[i:i + 1] != theirs_bin[i:i + 1])
        fail("funmem's binary differs from futhark-data's at byte %d" % k)
    # funmem reads their text (and a mix of text and binary).
    theirs_text = "\n".join(fd.dumps(v) for v in vals).encode()
    if funmem(["-b"], theirs_text) != theirs_bin:
        fail("funmem read futhark-data's text as different values")
    mixed = b"".join(bytes(fd.dumpb(v)) if k % 2 else fd.dumps(v).encode() + b" " for k, v in enumerate(vals))
    if funmem(["-b"], mixed) != theirs_bin:
        fail("funmem read a mix of futhark-data's text and binary as different values")
    return len(vals)


def check_we_write_they_read():
    gens = []
    for name in TYPES:
        for shape in ["", "[4]", "[3][2]", "[2][2][2]", "[0]", "[2][0]", "[0][2][1]"]:
            gens.append(shape + name)
    args = []
    for g in gens:
        args += ["-g", g]
    args += ["-s", "42", "--i32-bounds=-100:100", "--f64-bounds=-1e6:1e6"]
    text = list(fd.loads(funmem(args, b"").decode()))
    raw = funmem(args + ["-b"], b"")
    binary = list(fd.loadb(raw))
    if len(text) != len(gens) or len(binary) != len(gens):
        fail("futhark-data read %d text and %d binary values of funmem's %d" % (len(text), len(binary), len(gens)))
    for g, t, b in zip(gens, text, binary):
        want = "".join("[%s]" % d for d in g.split("]")[:-1] if d.startswith("[") for d in [d[1:]])
        if describe(b) != want + str(np.dtype(TYPES[g.split("]")[-1]])) or not same(t, b):
            fail("funmem's -g %s: futhark-data read text %s %r and binary %s %r" % (g, describe(t), t, describe(b), b))
    if b"".join(bytes(fd.dumpb(np.asarray(v) if np.ndim(v) else v)) for v in binary) != raw:
        fail("futhark-data writes funmem's values in other bytes than funmem")
    return len(gens)


n = check_they_write_we_read()
m = check_we_write_they_read()
print("futhark-data check: %d values futhark-data wrote and %d funmem wrote agree" % (n, m))

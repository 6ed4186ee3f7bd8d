#!/usr/bin/env python3
"""Prints the index of the first OpenCL platform whose name contains
PATTERN (case-insensitive), as Rodinia's `-p` counts them, or nothing when
none does; with no PATTERN, lists the platforms. scripts/bench-rodinia uses
it so that Rodinia runs on the device `funmem bench` uses when several
drivers are registered (PoCL beside NVIDIA's, say). Standard library only
(ctypes over the ICD loader, libOpenCL.so.1).

    clplatform.py [PATTERN]
"""

import ctypes
import sys

CL_PLATFORM_NAME = 0x0902


def platforms():
    try:
        cl = ctypes.CDLL("libOpenCL.so.1")
    except OSError:
        return []
    n = ctypes.c_uint(0)
    if cl.clGetPlatformIDs(0, None, ctypes.byref(n)) != 0 or n.value == 0:
        return []
    ids = (ctypes.c_void_p * n.value)()
    if cl.clGetPlatformIDs(n.value, ids, None) != 0:
        return []
    names = []
    for p in ids:
        buf = ctypes.create_string_buffer(256)
        cl.clGetPlatformInfo(ctypes.c_void_p(p), CL_PLATFORM_NAME, 256, buf, None)
        names.append(buf.value.decode(errors="replace"))
    return names


def main(argv):
    names = platforms()
    if len(argv) < 2:
        for i, name in enumerate(names):
            print(f"{i}: {name}")
        return
    for i, name in enumerate(names):
        if argv[1].lower() in name.lower():
            print(i)
            return


if __name__ == "__main__":
    main(sys.argv)

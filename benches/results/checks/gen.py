# Expected output of check_scan_<t>.imp (funmem run, one value or array a line) for `python3 gen.py <t> <n> | md5sum`:
# the sum and the last element not -1 of x_i = i % 5 - 1, then every prefix of both.
import sys
t, n = sys.argv[1], int(sys.argv[2])
fmt = (lambda v: f"{v}{t}") if t != "f32" else (lambda v: f"{float(v)}f32")
xs = [i % 5 - 1 for i in range(n)]
s = []; acc = 0
for x in xs: acc += x; s.append(acc)
z = []; c = -1
for x in xs:
    if x != -1: c = x
    z.append(c)
out = sys.stdout
out.write(fmt(acc) + "\n" + fmt(c) + "\n")
out.write("[" + ", ".join(map(fmt, s)) + "]\n")
out.write("[" + ", ".join(map(fmt, z)) + "]\n")

-- The inclusive prefix sums of a 1-D array of i64 by scan (input: the
-- array; see scan_i64.imp for the IMP program the H100 figures were taken
-- with).
def main [n] (xs: [n]i64) = scan (+) 0i64 xs

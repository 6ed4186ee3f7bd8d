-- The inclusive prefix sums of a 1-D array of i32 by scan (input: the
-- array; see scan_i32.imp for the IMP program the H100 figures were taken
-- with).
def main [n] (xs: [n]i32) = scan (+) 0i32 xs

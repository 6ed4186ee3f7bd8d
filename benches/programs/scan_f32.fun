-- The inclusive prefix sums of a 1-D array of f32 by scan (input: the
-- array; see scan_f32.imp for the IMP program the H100 figures were taken
-- with).
def main [n] (xs: [n]f32) = scan (+) 0f32 xs

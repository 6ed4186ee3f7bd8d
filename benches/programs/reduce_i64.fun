-- The sum of a 1-D array of i64 by reduce (input: the array; see
-- reduce_i64.imp for the IMP program the H100 figures were taken with).
def main [n] (xs: [n]i64) = reduce (+) 0i64 xs

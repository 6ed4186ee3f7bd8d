-- The sum of a 1-D array of i32 by reduce (input: the array; see
-- reduce_i32.imp for the IMP program the H100 figures were taken with).
def main [n] (xs: [n]i32) = reduce (+) 0i32 xs

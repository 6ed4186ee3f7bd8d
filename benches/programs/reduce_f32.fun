-- The sum of a 1-D array of f32 by reduce (input: the array; see
-- reduce_f32.imp for the IMP program the H100 figures were taken with).
def main [n] (xs: [n]f32) = reduce (+) 0f32 xs

-- Fig. 10.3-10.5 (series): `concat first rest` of a one-element replicate
-- and a kernel over the other rows - 1 elements: both are built in the
-- result's block (offsets 0 and 1), halving the peak memory.
-- ==
-- input { 4 }
-- output { [7i64, 1i64, 4i64, 9i64] }
-- input { 1 }
-- output { [7i64] }
-- input { 0 }
-- error: negative
-- structure { Alloc 3 copy 0 }
-- structure simplify,coalesce { Alloc 3 copy 0 }
def main (rows: int) =
  let (one: int) = 1
  let (first: [one]int) = replicate one 7
  let (r1: int) = rows - 1
  let (rest: [r1]int) = kernel i < r1 do
      let (i1: int) = i + 1
      let (v: int) = i1 * i1
      in (v)
  let (result: [rows]int) = concat first rest
  in (result)

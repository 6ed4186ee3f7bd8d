-- Fig. 10.1-10.2 (srad, CPU pipeline): an inner loop's result is copied
-- to a double buffer in each round of an outer loop; the thesis builds the
-- inner loop's arrays in the double buffer's block instead (the copy
-- goes). The program's result copy of the outer loop stays.
-- ==
-- input { 2 1 [1, 2] }
-- output { [4i64, 11i64] }
-- input { 2 0 [1, 2] }
-- output { [1i64, 2i64] }
-- structure { Alloc 3 copy 2 }
-- structure simplify,coalesce { Alloc 3 copy 2 }
def main (n: int) (steps: int) (img: [n]int) =
  let (final: [n]int) = loop (buf: [n]int) = (img) for s < 2 do
      let (res: [n]int) = loop (cur: [n]int) = (buf) for t < steps do
          let (next: [n]int) = kernel j < n do
              let (v: int) = cur[j]
              let (w: int) = v * 2 + j
              in (w)
          in (next)
      let (dbl: [n]int) = copy res
      in (dbl)
  in (final)

-- Fig. 6.3 (a last use inside a loop): t is made before the loop and read
-- in every iteration (u = t + acc). Its last use is the whole loop, not
-- u's statement: a block made in the loop body (u's, v's) must not reuse
-- t's, or the next iteration would read v's values as t. (v = 2 * u reads
-- u at the index it writes, so v may still share u's block.)
-- ==
-- input { 3 }
-- output { [0i64, 22i64, 44i64] }
-- input { 1 }
-- output { [0i64] }
-- input { 0 }
-- output { empty([0]i64) }
-- structure { Alloc 4 copy 1 }
-- structure simplify,coalesce { Alloc 4 copy 1 }
-- structure simplify,coalesce,reuse-first-fit { Alloc 4 copy 1 }
-- structure simplify,coalesce,reuse { Alloc 4 copy 1 }
-- structure simplify,coalesce,reuse-optimal { Alloc 4 copy 1 }
def main (k: int) =
  let (t: [k]int) = iota k
  let (res: [k]int) = loop (acc: [k]int) = (t) for j < k do
      let (u: [k]int) = kernel i < k do
          let (a: int) = t[i] + acc[i]
          in (a)
      let (v: [k]int) = kernel i < k do
          let (b: int) = u[i] * 2
          in (b)
      in (v)
  in (res)

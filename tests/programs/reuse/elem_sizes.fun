-- Element sizes inside a kernel body: as (i32) and bs (i64) are made in
-- one iteration of rs's kernel, one after the other, so their lifetimes
-- do not meet; yet they may not share, for memory expansion interleaves
-- each per-iteration block by its element size and a block holding both
-- would overlap iterations' bytes. Without the rule bs is put in as's
-- block (grown to hold it), which expansion cannot interleave.
-- ==
-- input { 2 3 [1, 2, 3] }
-- output { [36i64, 54i64] }
-- input { 3 2 [4, -1] }
-- output { [9i64, 15i64, 21i64] }
-- structure { Alloc 3 }
-- structure simplify,reuse { Alloc 3 }
def main (n: int) (m: int) (ns: [m]int) =
  let (rs: [n]int) = kernel i < n do
      let (as: [m]i32) = kernel j < m do
          let (a: i32) = i32(ns[j] + i)
          in (a)
      let (s: i32) = reduce (+) 0i32 as
      let (bs: [m]int) = kernel j < m do
          let (b: int) = i64(s) * ns[j]
          in (b)
      let (t: int) = reduce (+) 0 bs
      in (t)
  in (rs)

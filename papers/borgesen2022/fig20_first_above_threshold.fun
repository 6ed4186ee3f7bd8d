-- Fig. 20 (a while loop): the index of the first element of A above the
-- threshold m, for a non-empty A; in pseudo code `loop i = 0 while i < n
-- && A[i] <= m do i + 1`. The statements are those that Listing 10
-- rewrites: e = n - 1, v = A[0] and l = v <= m before the loop, l as
-- the condition's initial value, and in the body i' = i + 1, a = i' <= e
-- and the next condition c' = if a then A[i'] <= m else false (the
-- thesis's language has no `&&`, and ours evaluates both operands, so
-- an if guards the read). Each iteration that reads A[i'] makes a
-- synchronous read, and so does v. The model flags the loop for
-- migration as a whole (Fig. 27a): its condition depends on a read made
-- in every iteration. Listing 10 (listing10_first_above_migrated.fun)
-- is the result; only p, the index, is read afterwards if the host uses
-- it (here it is returned).
-- Thesis: n reads before in the worst case (v, then A[1] .. A[n-1]),
-- 1 after (p; 0 if p had no use on the host).
-- ==
-- structure simplify { HostRead 2 }
-- structure simplify,migrate { HostRead 1 }
-- input { 4 5 [1, 2, 7, 1] }
-- output { 2i64 }
-- input { 3 5 [9, 1, 1] }
-- output { 0i64 }
-- input { 3 5 [1, 2, 3] }
-- output { 3i64 }
-- input { 1 0 [0] }
-- output { 1i64 }
def main (n: int) (m: int) (A: [n]int) =
  let (e: int) = n + -1
  let (v: int) = A[0]
  let (l: bool) = v <= m
  let (w: bool) (p: int) = loop (c: bool) (i: int) = (l, 0) while c do
      let (i1: int) = i + 1
      let (a: bool) = i1 <= e
      let (c1: bool) = if a then
          let (v1: int) = A[i1]
          let (l1: bool) = v1 <= m
          in (l1)
        else
          in (false)
      in (c1, i1)
  in (p)

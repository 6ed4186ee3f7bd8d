-- Fig. 18 (two_branches, of type [2]int -> bool -> bool -> int -> int):
-- moving the results of alternative branches to the device. As Fig. 16,
-- but the second if returns the parameter i in its false branch. After
-- migration the first if's false branch returns the constant 42 from a
-- one-element array made once, at the top level, and the second if's
-- false branch stores i with a single-threaded kernel at the end of the
-- branch (a variable cannot be stored ahead of time); z is computed on
-- the device and read once.
-- Thesis: 2 reads before in the worst case, 1 after.
-- ==
-- structure simplify { HostRead 2 }
-- structure simplify,migrate { HostRead 1 }
-- input { [1, 2] true true 7 }
-- output { 3i64 }
-- input { [1, 2] true false 7 }
-- output { 8i64 }
-- input { [1, 2] false true 7 }
-- output { 44i64 }
-- input { [1, 2] false false 7 }
-- output { 49i64 }
def main (A: [2]int) (a: bool) (b: bool) (i: int) =
  let (x: int) = if a then
      let (a0: int) = A[0]
      in (a0)
    else
      in (42)
  let (y: int) = if b then
      let (a1: int) = A[1]
      in (a1)
    else
      in (i)
  let (z: int) = x + y
  in (z)

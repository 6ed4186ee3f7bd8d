-- Fig. 19 (inaccurate, of type [2]int -> bool -> int): a shortcoming of
-- the branch model. Each branch reads one element and adds a constant.
-- The model pretends that both branches run, so it sees two reads and
-- "reduces" them to one by moving each branch's addition to the device
-- and reading z after the if. But only one branch runs, so the original
-- makes exactly one read too: nothing is gained, and the additions now
-- cost a kernel each.
-- Thesis: 1 read before, 1 after (the model counts 2 before).
-- ==
-- structure simplify { HostRead 2 }
-- structure simplify,migrate { HostRead 1 }
-- input { [1, 2] true }
-- output { 8i64 }
-- input { [1, 2] false }
-- output { 507i64 }
def main (A: [2]int) (c: bool) =
  let (z: int) = if c then
      let (x: int) = A[0]
      in (x + 7)
    else
      let (y: int) = A[1]
      in (y + 505)
  in (z)

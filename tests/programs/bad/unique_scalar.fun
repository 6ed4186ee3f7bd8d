-- Only array parameters can be unique.
-- ==
-- error: only an array parameter can be unique
def main (n: *int) =
  in (n)

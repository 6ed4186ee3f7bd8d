-- A program is `def main ...`; other function names are not part of the
-- language.
-- ==
-- error: expected `main`
def f (x: int) =
  in (x)

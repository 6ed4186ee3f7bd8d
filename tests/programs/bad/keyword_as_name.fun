-- The element types are reserved words.
-- ==
-- error: `f32` is a keyword \(an element type\) and cannot be used as a name
def main (f32: int) =
  in (f32)

; Wrong: the second load of %p.x is forwarded from the first across a store
; to %q.x, but %p and %q may be the same object.
; smt: against
; verdict: @main counterexample
type Point { x: i64, y: i64 }
func @main(%p: Point, %q: Point) -> i64 {
entry:
  %a = load %p.x
  store %q.x, 5
  %b = load %p.x
  %c = add %a, %b
  ret %c
}
; optimized:
type Point { x: i64, y: i64 }
func @main(%p: Point, %q: Point) -> i64 {
entry:
  %a = load %p.x
  store %q.x, 5
  %c = add %a, %a
  ret %c
}

; Wrong: two volatile loads swapped: each is an environment step with the
; accessed object as its argument, so the sequence of steps differs.
; smt: against
; verdict: @main counterexample
type Point { x: i64, y: i64 }
func @main(%p: Point, %q: Point) -> i64 {
entry:
  %a = load.volatile %p.x
  %b = load.volatile %q.y
  %r = sub %a, %b
  ret %r
}
; optimized:
type Point { x: i64, y: i64 }
func @main(%p: Point, %q: Point) -> i64 {
entry:
  %b = load.volatile %q.y
  %a = load.volatile %p.x
  %r = sub %a, %b
  ret %r
}

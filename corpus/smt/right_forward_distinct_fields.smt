; Right: a store to %q.y cannot change %p.x (different field leaves), so the
; second load is forwarded; the dead second load goes.
; smt: against
; verdict: @main proved
type Point { x: i64, y: i64 }
func @main(%p: Point, %q: Point) -> i64 {
entry:
  %a = load %p.x
  store %q.y, 5
  %b = load %p.x
  %c = add %a, %b
  ret %c
}
; optimized:
type Point { x: i64, y: i64 }
func @main(%p: Point, %q: Point) -> i64 {
entry:
  %a = load %p.x
  store %q.y, 5
  %c = shl %a, 1
  ret %c
}

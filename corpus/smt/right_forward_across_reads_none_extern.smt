; Right: an extern that declares `reads(none)` and writes nothing cannot change
; %p.x, so the load after it is forwarded from the store before it.
; smt: against
; verdict: @main proved
type Point { x: i64, y: i64 }
extern @tick(i64) -> i64 reads(none)
func @main(%p: Point, %n: i64) -> i64 {
entry:
  store %p.x, %n
  %t = call @tick(%n)
  %v = load %p.x
  %r = add %v, %t
  ret %r
}
; optimized:
type Point { x: i64, y: i64 }
extern @tick(i64) -> i64 reads(none)
func @main(%p: Point, %n: i64) -> i64 {
entry:
  store %p.x, %n
  %t = call @tick(%n)
  %r = add %n, %t
  ret %r
}

; Wrong: the store is dropped although the extern may read %p.x (it declares
; no effects); the environment's result depends on what it reads.
; smt: against
; verdict: @main counterexample
type Point { x: i64, y: i64 }
extern @peek(Point) -> i64
func @main(%p: Point) -> i64 {
entry:
  store %p.x, 7
  %r = call @peek(%p)
  ret %r
}
; optimized:
type Point { x: i64, y: i64 }
extern @peek(Point) -> i64
func @main(%p: Point) -> i64 {
entry:
  %r = call @peek(%p)
  ret %r
}

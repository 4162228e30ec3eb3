; Wrong: the load is hoisted above the branch that guards it; with %p null and
; %c zero the optimized function traps null_deref where the original returns.
; smt: against
; verdict: @main counterexample
type Point { x: i64, y: i64 }
func @main(%p: Point, %c: i64) -> i64 {
entry:
  br %c, yes, no
yes:
  %v = load %p.x
  ret %v
no:
  ret 0
}
; optimized:
type Point { x: i64, y: i64 }
func @main(%p: Point, %c: i64) -> i64 {
entry:
  %v = load %p.x
  %r = select %c, %v, 0
  ret %r
}

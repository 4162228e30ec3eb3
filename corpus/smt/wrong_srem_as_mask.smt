; Wrong: `srem x, 2` is not `and x, 1` for negative x (srem takes the sign of x).
; smt: against
; verdict: @main counterexample
func @main(%x: i64) -> i64 {
entry:
  %r = srem %x, 2
  ret %r
}
; optimized:
func @main(%x: i64) -> i64 {
entry:
  %r = and %x, 1
  ret %r
}

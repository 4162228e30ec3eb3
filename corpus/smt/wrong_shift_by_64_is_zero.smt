; Wrong: shifts use the amount & 63, so `shl x, 64` is x, not 0.
; smt: against
; verdict: @main counterexample
func @main(%x: i64) -> i64 {
entry:
  %c = shl %x, 64
  ret %c
}
; optimized:
func @main(%x: i64) -> i64 {
entry:
  ret 0
}

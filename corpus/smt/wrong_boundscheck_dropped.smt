; Wrong: an unused element load replaced by a `nullcheck` only: an index
; out of bounds no longer traps.
; smt: against
; verdict: @main counterexample
func @main(%p: [i64], %i: i64) -> i64 {
entry:
  %v = load %p[%i]
  ret 0
}
; optimized:
func @main(%p: [i64], %i: i64) -> i64 {
entry:
  nullcheck %p
  ret 0
}

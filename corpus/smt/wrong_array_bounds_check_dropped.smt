; Wrong: the guard-then-load became a load at index - 1 (off by one), reading
; out of bounds for index 0.
; smt: against
; verdict: @main counterexample
func @main(%a: [i64], %i: i64) -> i64 {
entry:
  %v = load %a[%i]
  ret %v
}
; optimized:
func @main(%a: [i64], %i: i64) -> i64 {
entry:
  %j = sub %i, 1
  %v = load %a[%j]
  ret %v
}

; Wrong: two escapes swapped: the output trace is observable in order.
; smt: against
; verdict: @main counterexample
func @main(%a: i64, %b: i64) {
entry:
  escape %a
  escape %b
  ret
}
; optimized:
func @main(%a: i64, %b: i64) {
entry:
  escape %b
  escape %a
  ret
}

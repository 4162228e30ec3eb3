; Right: an unused field load through a parameter replaced by `nullcheck`
; and an unused element load by `boundscheck` (what DCE does with a load
; kept only for its trap): the same traps, no read.
; smt: against
; verdict: @main proved
func @main(%p: [i64], %q: [i64], %i: i64) -> i64 {
entry:
  %v = load %p[%i]
  %n = len %q
  ret 0
}
; optimized:
func @main(%p: [i64], %q: [i64], %i: i64) -> i64 {
entry:
  boundscheck %p, %i
  nullcheck %q
  ret 0
}

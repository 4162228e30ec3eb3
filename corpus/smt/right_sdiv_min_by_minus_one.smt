; Right: `sdiv x, -1` is `neg x`, MIN included (sdiv MIN, -1 = MIN); `srem x, -1`
; is 0; `shl x, 64` shifts by 64 & 63 = 0.
; smt: against
; verdict: @main proved
func @main(%x: i64) -> i64 {
entry:
  %a = sdiv %x, -1
  %b = srem %x, -1
  %c = shl %x, 64
  %d = add %a, %b
  %e = add %d, %c
  ret %e
}
; optimized:
func @main(%x: i64) -> i64 {
entry:
  %a = neg %x
  %e = add %a, %x
  ret %e
}

; GVN's phi of operations: `add %q, %p` of two phis of a join is the phi of
; the additions on each edge, and merges into it: proved.
; smt: passes gvn,dce
; verdict: @main proved
func @main(%k: i64, %a: i64, %b: i64, %c: i64, %d: i64) -> i64 {
entry:
  br %k, left, right
left:
  %s = add %a, %b
  jmp join
right:
  %t = add %c, %d
  jmp join
join:
  %x = phi [left: %s], [right: %t]
  %p = phi [left: %a], [right: %c]
  %q = phi [left: %b], [right: %d]
  %y = add %q, %p
  %r = add %x, %y
  ret %r
}

; GVN's congruent loop phis (two counters from 0 that both step by 1 are
; one value; `%j` merges into `%i`): proved for up to the unrolling bound.
; smt: passes gvn,dce
; verdict: @main proved (bounded, 2)
func @main(%n: i64) -> i64 {
entry:
  jmp head
head:
  %i = phi [entry: 0], [body: %i1]
  %j = phi [entry: 0], [body: %j1]
  %acc = phi [entry: 0], [body: %acc1]
  %c = slt %i, %n
  br %c, body, done
body:
  %s = add %i, %j
  %acc1 = add %acc, %s
  %i1 = add %i, 1
  %j1 = add %j, 1
  jmp head
done:
  ret %acc
}

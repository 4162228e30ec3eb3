; Wrong: the optimized loop runs one iteration too many (`sle` for `slt`); found within the unrolling bound.
; smt: against
; unroll: 3
; verdict: @main counterexample
func @main(%n: i64) -> i64 {
entry:
  jmp head
head:
  %i = phi [entry: 0], [body: %i1]
  %s = phi [entry: 0], [body: %s1]
  %c = slt %i, %n
  br %c, body, done
body:
  %s1 = add %s, %i
  %i1 = add %i, 1
  jmp head
done:
  ret %s
}
; optimized:
func @main(%n: i64) -> i64 {
entry:
  jmp head
head:
  %i = phi [entry: 0], [body: %i1]
  %s = phi [entry: 0], [body: %s1]
  %c = sle %i, %n
  br %c, body, done
body:
  %s1 = add %s, %i
  %i1 = add %i, 1
  jmp head
done:
  ret %s
}

; Wrong: two counters from 0 that step by 1 and by 2 merged as if they were
; congruent (what an optimistic guess that is never checked at the back
; edge would do): a counterexample within the unrolling bound.
; smt: against
; verdict: @main counterexample
func @main(%n: i64) -> i64 {
entry:
  jmp head
head:
  %i = phi [entry: 0], [body: %i1]
  %j = phi [entry: 0], [body: %j1]
  %c = slt %i, %n
  br %c, body, done
body:
  %i1 = add %i, 1
  %j1 = add %j, 2
  jmp head
done:
  %r = sub %j, %i
  ret %r
}
; optimized:
func @main(%n: i64) -> i64 {
entry:
  jmp head
head:
  %i = phi [entry: 0], [body: %i1]
  %c = slt %i, %n
  br %c, body, done
body:
  %i1 = add %i, 1
  jmp head
done:
  %r = sub %i, %i
  ret %r
}

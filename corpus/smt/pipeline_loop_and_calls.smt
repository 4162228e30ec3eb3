; The pipeline on a loop with an inlined helper and an array: proved for up
; to the unrolling bound; the loop-free helper gets a full proof.
; smt: passes pipeline
; verdict: @main proved (bounded, 2)
; verdict: @get proved
func @get(%a: [i64], %i: i64) -> i64 {
entry:
  %v = load %a[%i]
  %w = load %a[%i]
  %r = add %v, %w
  ret %r
}
func @main(%a: [i64], %n: i64) -> i64 {
entry:
  jmp head
head:
  %i = phi [entry: 0], [body: %i1]
  %s = phi [entry: 0], [body: %s1]
  %c = slt %i, %n
  br %c, body, done
body:
  %x = call @get(%a, %i)
  %s1 = add %s, %x
  %i1 = add %i, 1
  jmp head
done:
  ret %s
}

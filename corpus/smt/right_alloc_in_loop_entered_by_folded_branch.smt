; Right: the original enters its loop through a branch on a constant, so a
; depth-first search of its CFG finds the back edge at the other end of the
; loop than in the optimized function (branch folded into a jump). Objects
; allocated in the loop used to be named by the retreating edges taken so
; far, which then differed between the sides: the object handed to @see got
; two names, the steps did not pair, and the checker reported a
; counterexample the interpreter did not confirm (smt-unconfirmed; seed 9008
; of `verify --generated`). Objects are now named by how many the allocation
; site made before, the same on both sides.
; smt: against
; verdict: @main proved (bounded, 2)
type Cell { v: i64 }
extern @see(Cell) -> i64
func @main(%n: i64) -> i64 {
entry:
  %z = eq 1, 0
  br %z, body, head
body:
  %b = phi [entry: 0], [head: %i]
  %c = new Cell
  store %c.v, %b
  %r = call @see(%c)
  %b1 = add %b, %r
  jmp head
head:
  %i = phi [entry: 0], [body: %b1]
  %k = slt %i, %n
  br %k, body, done
done:
  ret %i
}
; optimized:
type Cell { v: i64 }
extern @see(Cell) -> i64
func @main(%n: i64) -> i64 {
entry:
  jmp head
body:
  %c = new Cell
  store %c.v, %i
  %r = call @see(%c)
  %b1 = add %i, %r
  jmp head
head:
  %i = phi [entry: 0], [body: %b1]
  %k = slt %i, %n
  br %k, body, done
done:
  ret %i
}

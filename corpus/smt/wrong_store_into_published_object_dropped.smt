; Wrong: the new object is published through @g, so its field is observable;
; dropping the store to it changes the final heap.
; smt: against
; verdict: @main counterexample
type Cell { v: i64 }
global @g: Cell
func @main(%n: i64) {
entry:
  %o = new Cell
  store %o.v, %n
  store @g, %o
  ret
}
; optimized:
type Cell { v: i64 }
global @g: Cell
func @main(%n: i64) {
entry:
  %o = new Cell
  store @g, %o
  ret
}

; Wrong: the object is published through @g before the call, so the extern can
; read its field; dropping the store before the call changes what the extern
; sees (and so its result), even though both sides overwrite the field after.
; smt: against
; verdict: @main counterexample
type Cell { v: i64 }
global @g: Cell
extern @peek() -> i64
func @main(%n: i64) -> i64 {
entry:
  %o = new Cell
  store @g, %o
  store %o.v, %n
  %r = call @peek()
  store %o.v, 7
  ret %r
}
; optimized:
type Cell { v: i64 }
global @g: Cell
extern @peek() -> i64
func @main(%n: i64) -> i64 {
entry:
  %o = new Cell
  store @g, %o
  %r = call @peek()
  store %o.v, 7
  ret %r
}

; Right: an object that never leaves the function is not observable: its
; allocation and stores go, the loaded value is forwarded.
; smt: against
; verdict: @main proved
type Cell { v: i64 }
extern @work(i64) -> i64
func @main(%n: i64) -> i64 {
entry:
  %o = new Cell
  store %o.v, %n
  %r = call @work(%n)
  %v = load %o.v
  %s = add %r, %v
  ret %s
}
; optimized:
type Cell { v: i64 }
extern @work(i64) -> i64
func @main(%n: i64) -> i64 {
entry:
  %r = call @work(%n)
  %s = add %r, %n
  ret %s
}

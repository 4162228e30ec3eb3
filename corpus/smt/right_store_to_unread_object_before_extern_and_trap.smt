; Regression (sweep seed 909, session 8): a store into a never-read private
; object, an extern step that writes Node.val, then a store that traps on its
; null base. `lse` drops the first store, which is right. The SMT encoding
; used to count the trapping store's value as exposed at the trap, so on the
; optimized side the Node was compared but the extern could not have written
; it: a false counterexample ("heap: field #0.0") that the interpreter did
; not confirm (an `smt-unconfirmed` finding). A store exposes its value only
; once it has happened.
; smt: passes lse
; verdict: @main proved
type Node { val: i64 }
type Pair { link: Node }
extern @shuffle([Node]) -> i64 reads([Node]) writes([Node], Node.val)

func @main() -> i64 {
entry:
  %v14 = new Node
  %v114 = new Pair
  store %v114.link, %v14
  %v117 = call @shuffle(null)
  store (null: Pair).link, %v14
  ret 0
}

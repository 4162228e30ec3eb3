//! Register allocation glue: [`VCode`] seen as a `regalloc2::Function`, the
//! machine environment (which registers may hold values), and the checker.
//!
//! regalloc2 (Cranelift's allocator) assigns every virtual register a
//! physical register or a spill slot and inserts the moves that realise
//! block parameters (phi elimination by parallel moves, cycles broken through
//! the scratch register `r11`) and spills. In harness mode its symbolic
//! checker verifies the allocation against the instructions' constraints
//! ([`check`]), on every function whose checker state stays under
//! [`CHECK_LIMIT`]: the checker keeps one map per block from every register
//! and spill slot to the virtual registers it holds, so its time and memory
//! grow as blocks × slots, quadratic in a huge function that the
//! single-pass allocator spills (a 10,000-instruction `alias_diamonds`
//! took 3.0 s and 979 MB, one of 100,000 ran out of 24 GB). Its SSA
//! validation likewise runs only within [`SSA_LIMIT`]. A skipped check is
//! said in the `--emit asm` listing ([`Checked::notes`]).
//!
//! Functions of more than [`SINGLE_PASS_ABOVE`] machine instructions are
//! allocated by regalloc2's single-pass allocator (`Algorithm::Fastalloc`,
//! Cranelift's `regalloc_algorithm=single_pass`) instead of Ion: on a
//! 10,000-instruction function Ion alone costs 48 M instructions (callgrind),
//! more than the rest of the backend together, while the single-pass
//! allocator costs 13 M. The code it makes spills more, which matters for
//! small hot functions (all generated programs stay far below the
//! threshold) and little for huge straight-line ones.

use crate::isel::{non_preferred, preferred, regs};
use crate::vcode::{VCode, VInst};
use regalloc2::{
    Block, Function, Inst, InstRange, MachineEnv, Operand, Output, PRegSet, RegClass,
    RegallocOptions, VReg,
};

impl Function for VCode {
    fn num_insts(&self) -> usize {
        self.insts.len()
    }
    fn num_blocks(&self) -> usize {
        self.blocks.len()
    }
    fn entry_block(&self) -> Block {
        Block::new(0)
    }
    fn block_insns(&self, block: Block) -> InstRange {
        let b = &self.blocks[block.index()];
        InstRange::new(Inst::new(b.start), Inst::new(b.end))
    }
    fn block_succs(&self, block: Block) -> &[Block] {
        &self.blocks[block.index()].succs
    }
    fn block_preds(&self, block: Block) -> &[Block] {
        &self.blocks[block.index()].preds
    }
    fn block_params(&self, block: Block) -> &[VReg] {
        &self.blocks[block.index()].params
    }
    fn is_ret(&self, insn: Inst) -> bool {
        matches!(
            self.insts[insn.index()].inst,
            VInst::Ret | VInst::Trap { .. }
        )
    }
    fn is_branch(&self, insn: Inst) -> bool {
        matches!(
            self.insts[insn.index()].inst,
            VInst::Jmp { .. } | VInst::Br { .. } | VInst::CmpBr { .. } | VInst::CmpImmBr { .. }
        )
    }
    fn branch_blockparams(&self, _block: Block, insn: Inst, _succ_idx: usize) -> &[VReg] {
        &self.insts[insn.index()].args
    }
    fn inst_operands(&self, insn: Inst) -> &[Operand] {
        &self.insts[insn.index()].operands
    }
    fn inst_clobbers(&self, insn: Inst) -> PRegSet {
        self.insts[insn.index()].clobbers
    }
    fn num_vregs(&self) -> usize {
        self.num_vregs
    }
    fn spillslot_size(&self, _regclass: RegClass) -> usize {
        1
    }
}

/// The registers generated code allocates (see `abi` for the reserved ones).
pub fn machine_env() -> MachineEnv {
    MachineEnv {
        preferred_regs_by_class: [preferred(), vec![], vec![]],
        non_preferred_regs_by_class: [non_preferred(), vec![], vec![]],
        scratch_by_class: [Some(regs::R11), None, None],
        fixed_stack_slots: vec![],
    }
}

thread_local! {
    /// regalloc2's working memory, reused by every allocation of the thread.
    static CTX: std::cell::RefCell<regalloc2::Ctx> = std::cell::RefCell::new(regalloc2::Ctx::default());
}

/// Functions with more machine instructions than this get the single-pass allocator.
pub const SINGLE_PASS_ABOVE: usize = 4096;

/// The largest checker state [`check`] builds: blocks × (spill slots +
/// [`REGISTERS`]). 2^20 entries is about 80 MB and 0.2 s of checking at
/// worst; every generated program, corpus file and zoo module stays far
/// below it.
pub const CHECK_LIMIT: usize = 1 << 20;

/// The largest function regalloc2's SSA validation runs on, as machine
/// instructions × blocks: it walks the dominator tree up from every use to
/// the block defining the value, so a deep tree (a chain of diamonds) makes
/// it instructions × depth. 2^24 steps is about 0.05 s.
pub const SSA_LIMIT: usize = 1 << 24;

/// The physical registers an allocation can name (every x86-64 GPR).
pub const REGISTERS: usize = 16;

/// What became of one of the harness checks of one function.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Not asked for.
    Off,
    /// Ran and found nothing wrong.
    Passed,
    /// Asked for but not run: its cost was over its limit.
    Skipped {
        /// The cost measure of the check (see [`CHECK_LIMIT`], [`SSA_LIMIT`]).
        cost: usize,
    },
}

/// What [`allocate`] did about regalloc2's SSA validation and its checker.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// regalloc2's SSA validation of the input.
    pub ssa: Gate,
    /// regalloc2's checker of the allocation.
    pub checker: Gate,
}

impl Checked {
    /// Whether a check asked for was skipped.
    pub fn skipped(&self) -> bool {
        matches!(self.ssa, Gate::Skipped { .. }) || matches!(self.checker, Gate::Skipped { .. })
    }

    /// One line per skipped check, saying what it would have cost (the
    /// `--emit asm` listing prints them).
    pub fn notes(&self, code: &VCode, out: &Output) -> Vec<String> {
        let mut notes = Vec::new();
        if let Gate::Skipped { cost } = self.ssa {
            notes.push(format!(
                "regalloc2 SSA validation skipped: {} instructions x {} blocks = {cost} > {SSA_LIMIT}",
                code.insts.len(),
                code.blocks.len()
            ));
        }
        if let Gate::Skipped { cost } = self.checker {
            notes.push(format!(
                "regalloc2 checker skipped: {} blocks x ({} spill slots + {REGISTERS} registers) = {cost} > {CHECK_LIMIT}",
                code.blocks.len(),
                out.num_spillslots
            ));
        }
        notes
    }
}

/// The size of the checker's state for `out`: one map per block over every
/// register and spill slot.
pub fn check_cost(code: &VCode, out: &Output) -> usize {
    code.blocks
        .len()
        .saturating_mul(out.num_spillslots.saturating_add(REGISTERS))
}

/// The bound on the steps of regalloc2's SSA validation of `code`.
pub fn ssa_cost(code: &VCode) -> usize {
    code.insts.len().saturating_mul(code.blocks.len())
}

/// Whether [`allocate`] runs regalloc2's SSA validation on `code` (asked for
/// by `check`, and within [`SSA_LIMIT`]): `Passed` if so, as it fails the
/// allocation otherwise.
pub fn ssa_gate(code: &VCode, check: bool) -> Gate {
    match ssa_cost(code) {
        _ if !check => Gate::Off,
        cost if cost > SSA_LIMIT => Gate::Skipped { cost },
        _ => Gate::Passed,
    }
}

/// Run regalloc2's checker on the allocation `out` of `code` if its state
/// stays within [`CHECK_LIMIT`]. An error is a backend bug.
pub fn check(code: &VCode, env: &MachineEnv, out: &Output) -> Result<Gate, String> {
    let cost = check_cost(code, out);
    if cost > CHECK_LIMIT {
        return Ok(Gate::Skipped { cost });
    }
    let mut checker = regalloc2::checker::Checker::new(code, env);
    checker.prepare(out);
    checker
        .run()
        .map_err(|e| format!("regalloc2 checker: {e:?}"))?;
    Ok(Gate::Passed)
}

/// Allocate registers for `code`; with `check`, run regalloc2's SSA
/// validation (within [`SSA_LIMIT`]) and its checker (within
/// [`CHECK_LIMIT`]) on the result (harness mode). An error is a backend bug.
pub fn allocate(code: &VCode, env: &MachineEnv, check: bool) -> Result<(Output, Checked), String> {
    let algorithm = if code.insts.len() > SINGLE_PASS_ABOVE {
        regalloc2::Algorithm::Fastalloc
    } else {
        regalloc2::Algorithm::Ion
    };
    let ssa = ssa_gate(code, check);
    let opts = RegallocOptions {
        verbose_log: false,
        validate_ssa: ssa == Gate::Passed,
        algorithm,
    };
    let out = CTX.with(|ctx| {
        let mut ctx = ctx.borrow_mut();
        regalloc2::run_with_ctx(code, env, &opts, &mut ctx)
            .map_err(|e| format!("regalloc2: {e:?}"))?;
        Ok::<_, String>(std::mem::take(&mut ctx.output))
    })?;
    let checker = if check {
        self::check(code, env, &out)?
    } else {
        Gate::Off
    };
    Ok((out, Checked { ssa, checker }))
}

#[cfg(test)]
mod tests {
    use super::{
        allocate, check, machine_env, ssa_gate, Checked, Gate, CHECK_LIMIT, SINGLE_PASS_ABOVE,
        SSA_LIMIT,
    };
    use regalloc2::{Allocation, OperandKind, Output};

    /// `n` diamonds in a chain, each loading and storing through two
    /// may-alias parameters (the scaling bench's `alias_diamonds`).
    fn diamonds(n: usize) -> String {
        let mut s = String::from(
            "type T { a: i64, b: i64 }\nfunc @main(%p: T, %q: T, %c: i64) -> i64 {\n\
             entry:\n  %s0 = load %p.a\n  jmp j0\n",
        );
        for k in 0..n {
            let next = k + 1;
            s.push_str(&format!(
                "j{k}:\n  %x{k} = load %p.a\n  %y{k} = load %q.b\n  br %c, l{k}, r{k}\n\
                 l{k}:\n  store %p.a, %x{k}\n  store %q.b, %s{k}\n  jmp m{k}\n\
                 r{k}:\n  store %q.a, %y{k}\n  %z{k} = load %p.b\n  jmp m{k}\n\
                 m{k}:\n  %u{k} = load %q.a\n  %s{next} = add %u{k}, %x{k}\n  jmp j{next}\n"
            ));
        }
        s.push_str(&format!("j{n}:\n  ret %s{n}\n}}\n"));
        s
    }

    /// The VCode of `@main` in `text`.
    fn main_code(text: &str) -> (ir::Module, crate::vcode::VCode) {
        let (m, _) = ir::parse_module(text, "t").unwrap();
        ir::verify_module(&m).unwrap();
        let code = crate::isel::select(&m, m.func(m.func_by_name("main").unwrap()), false, true);
        (m, code)
    }

    /// `out` with the register of the first register use moved to another
    /// allocatable register: a wrong allocation.
    fn corrupt(code: &crate::vcode::VCode, out: &mut regalloc2::Output) {
        let regs: Vec<_> = crate::isel::preferred()
            .into_iter()
            .chain(crate::isel::non_preferred())
            .collect();
        for i in 0..code.insts.len() {
            let ops = &code.insts[i].operands;
            let base = out.inst_alloc_offsets[i] as usize;
            for (j, op) in ops.iter().enumerate() {
                let alloc = out.allocs[base + j];
                if op.kind() != OperandKind::Use || op.as_fixed_nonallocatable().is_some() {
                    continue;
                }
                if let Some(r) = alloc.as_reg() {
                    let other = regs.iter().find(|&&o| o != r).unwrap();
                    out.allocs[base + j] = Allocation::reg(*other);
                    return;
                }
            }
        }
        panic!("no register use to corrupt");
    }

    #[test]
    fn the_checker_catches_a_wrong_allocation_of_a_small_function() {
        let (_m, code) = main_code(&diamonds(20));
        let env = machine_env();
        let (mut out, checked) = allocate(&code, &env, true).unwrap();
        assert_eq!((checked.ssa, checked.checker), (Gate::Passed, Gate::Passed));
        corrupt(&code, &mut out);
        let err = check(&code, &env, &out).unwrap_err();
        assert!(err.starts_with("regalloc2 checker:"), "{err}");
    }

    #[test]
    fn the_checker_is_skipped_above_its_limit_and_the_listing_says_so() {
        let (m, code) = main_code(&diamonds(350));
        let env = machine_env();
        let (mut out, checked) = allocate(&code, &env, true).unwrap();
        let Gate::Skipped { cost } = checked.checker else {
            panic!(
                "checked a function of {} blocks: {checked:?}",
                code.blocks.len()
            );
        };
        assert!(cost > CHECK_LIMIT, "{cost}");
        assert_eq!(checked.ssa, Gate::Passed);
        // Skipped means not run: a wrong allocation goes unreported.
        corrupt(&code, &mut out);
        assert_eq!(check(&code, &env, &out), Ok(Gate::Skipped { cost }));
        let opts = crate::CompileOptions {
            check_regalloc: true,
            listing: true,
            chaos: None,
            no_inline: false,
        };
        let c = crate::compile_with(&m, opts).unwrap();
        assert_eq!(c.unchecked, vec![0]);
        let listing = crate::listing(&c);
        assert!(listing.contains(&format!(
            "regalloc2 checker skipped: {} blocks",
            code.blocks.len()
        )));
        assert!(listing.contains(&format!("= {cost} > {CHECK_LIMIT}")));
        // Without the checker asked for, nothing is skipped.
        let c = crate::compile_with(&m, crate::CompileOptions::default()).unwrap();
        assert!(c.unchecked.is_empty());
    }

    #[test]
    fn ssa_validation_runs_within_its_limit_and_is_said_when_skipped() {
        let (_m, small) = main_code(&diamonds(20));
        assert_eq!(ssa_gate(&small, true), Gate::Passed);
        assert_eq!(ssa_gate(&small, false), Gate::Off);
        // A chain of 1,000 diamonds: a dominator tree 2,000 blocks deep.
        let (_m, deep) = main_code(&diamonds(1000));
        let Gate::Skipped { cost } = ssa_gate(&deep, true) else {
            panic!(
                "{} instructions x {} blocks",
                deep.insts.len(),
                deep.blocks.len()
            );
        };
        assert_eq!(cost, deep.insts.len() * deep.blocks.len());
        assert!(cost > SSA_LIMIT);
        let checked = Checked {
            ssa: Gate::Skipped { cost },
            checker: Gate::Passed,
        };
        assert!(checked.skipped());
        let note = format!(
            "regalloc2 SSA validation skipped: {} instructions x {} blocks = {cost} > {SSA_LIMIT}",
            deep.insts.len(),
            deep.blocks.len()
        );
        assert_eq!(checked.notes(&deep, &Output::default()), vec![note]);
    }

    /// A loop whose body is `n` instructions of arithmetic over a few live
    /// values, array loads and stores, and calls.
    fn big_loop(n: usize) -> String {
        let mut s = String::from(
            "func @f(%x: i64, %y: i64) -> i64 {\nentry:\n  %r = sub %x, %y\n  ret %r\n}\n\
             func @main(%a: [i64], %n: i64) -> i64 {\nentry:\n  jmp loop\nloop:\n  \
             %i = phi [entry: 0], [loop: %i2]\n  %acc = phi [entry: 1], [loop: %v{last}]\n  \
             %v0 = add %acc, %i\n",
        );
        for k in 1..n {
            let prev = format!("%v{}", k - 1);
            let other = if k > 5 {
                format!("%v{}", k - 5)
            } else {
                "%i".into()
            };
            let line = match k % 9 {
                0 => format!("  %v{k} = call @f({prev}, {other})\n"),
                3 => format!("  %e{k} = and {prev}, 7\n  %v{k} = load %a[%e{k}]\n"),
                6 => format!("  %e{k} = and {other}, 7\n  store %a[%e{k}], {prev}\n  %v{k} = xor {prev}, {other}\n"),
                1 => format!("  %v{k} = mul {prev}, {other}\n"),
                _ => format!("  %v{k} = add {prev}, {other}\n"),
            };
            s.push_str(&line);
        }
        s.push_str("  %i2 = add %i, 1\n  %more = slt %i2, %n\n  br %more, loop, done\ndone:\n");
        s.push_str(&format!("  ret %v{}\n}}\n", n - 1));
        s.replace("{last}", &(n - 1).to_string())
    }

    #[test]
    fn huge_functions_get_the_single_pass_allocator_and_run_like_the_interpreter() {
        let text = big_loop(3400);
        let (m, _) = ir::parse_module(&text, "big").unwrap();
        ir::verify_module(&m).unwrap();
        let main = m.func_by_name("main").unwrap();
        let code = crate::isel::select(&m, m.func(main), false, true);
        assert!(code.insts.len() > SINGLE_PASS_ABOVE, "{}", code.insts.len());
        let spec = ir::parse_input_spec(
            "a = [i64]{1, 2, 3, 4, 5, 6, 7, 8}, n = 5",
            "in",
            &m,
            m.func(main),
        )
        .unwrap();
        let config = interp::Config::default();
        let want = interp::Program::new(&m).run(main, &spec, &config);
        let opts = crate::CompileOptions {
            check_regalloc: true,
            listing: false,
            chaos: Some(7),
            no_inline: false,
        };
        let native = crate::NativeProgram::with_options(&m, opts).unwrap();
        let got = native.run(main, &spec, &config);
        assert_eq!(got.behaviour, want.behaviour);
        assert_eq!(got.fuel_used, want.fuel_used);
    }
}

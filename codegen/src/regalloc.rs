//! Register allocation glue: [`VCode`] seen as a `regalloc2::Function`, the
//! machine environment (which registers may hold values), and the checker.
//!
//! regalloc2 (Cranelift's allocator) assigns every virtual register a
//! physical register or a spill slot and inserts the moves that realise
//! block parameters (phi elimination by parallel moves, cycles broken through
//! the scratch register `r11`) and spills. In harness mode its symbolic
//! checker verifies the allocation against the instructions' constraints.
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

/// Allocate registers for `code`; with `check`, run regalloc2's checker on
/// the result (harness mode). An error is a backend bug.
pub fn allocate(code: &VCode, env: &MachineEnv, check: bool) -> Result<Output, String> {
    let algorithm = if code.insts.len() > SINGLE_PASS_ABOVE {
        regalloc2::Algorithm::Fastalloc
    } else {
        regalloc2::Algorithm::Ion
    };
    let opts = RegallocOptions {
        verbose_log: false,
        validate_ssa: check,
        algorithm,
    };
    let out = CTX.with(|ctx| {
        let mut ctx = ctx.borrow_mut();
        regalloc2::run_with_ctx(code, env, &opts, &mut ctx)
            .map_err(|e| format!("regalloc2: {e:?}"))?;
        Ok::<_, String>(std::mem::take(&mut ctx.output))
    })?;
    if check {
        let mut checker = regalloc2::checker::Checker::new(code, env);
        checker.prepare(&out);
        checker
            .run()
            .map_err(|e| format!("regalloc2 checker: {e:?}"))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::SINGLE_PASS_ABOVE;

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

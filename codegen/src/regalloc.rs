//! Register allocation glue: [`VCode`] seen as a `regalloc2::Function`, the
//! machine environment (which registers may hold values), and the checker.
//!
//! regalloc2 (Cranelift's allocator) assigns every virtual register a
//! physical register or a spill slot and inserts the moves that realise
//! block parameters (phi elimination by parallel moves, cycles broken through
//! the scratch register `r11`) and spills. In harness mode its symbolic
//! checker verifies the allocation against the instructions' constraints.

use crate::isel::{preferred, regs};
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
        non_preferred_regs_by_class: [vec![regs::RBX], vec![], vec![]],
        scratch_by_class: [Some(regs::R11), None, None],
        fixed_stack_slots: vec![],
    }
}

/// Allocate registers for `code`; with `check`, run regalloc2's checker on
/// the result (harness mode). An error is a backend bug.
pub fn allocate(code: &VCode, env: &MachineEnv, check: bool) -> Result<Output, String> {
    let opts = RegallocOptions {
        verbose_log: false,
        validate_ssa: check,
        algorithm: regalloc2::Algorithm::Ion,
    };
    let out = regalloc2::run(code, env, &opts).map_err(|e| format!("regalloc2: {e:?}"))?;
    if check {
        let mut checker = regalloc2::checker::Checker::new(code, env);
        checker.prepare(&out);
        checker
            .run()
            .map_err(|e| format!("regalloc2 checker: {e:?}"))?;
    }
    Ok(out)
}

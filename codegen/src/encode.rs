//! Encoding: the instructions a [`iced_x86::code_asm::CodeAssembler`]
//! collected become machine code in one pass with iced's [`Encoder`], every
//! branch to a label in its near (rel32) form, the labels resolved by
//! patching each rel32 field once all offsets are known.
//!
//! iced's `BlockEncoder` (what `CodeAssembler::assemble` uses) boxes every
//! instruction and encodes each at least twice while it shrinks branches to
//! their short forms; that was more than a third of a small module's compile
//! time. Here every instruction is encoded once; near branches cost a few
//! bytes more than short ones.
//!
//! The assembler marks a label's instruction by setting its `ip` to the
//! label's id (ids start at 1, unlabelled instructions have `ip` 0), and a
//! branch to a label carries the label's id as its target.

use crate::emit::CodegenError;
use iced_x86::{Code, Encoder, Instruction, OpKind};

/// Machine code and where each instruction starts.
pub struct Encoded {
    /// The bytes.
    pub code: Vec<u8>,
    /// Per instruction (same index as the input), its offset in `code`.
    pub offsets: Vec<u32>,
}

fn error(msg: String) -> CodegenError {
    CodegenError(msg)
}

/// Whether `ins` is a branch or call to a label (a relative target).
fn is_label_branch(ins: &Instruction) -> bool {
    ins.op_count() == 1 && ins.op0_kind() == OpKind::NearBranch64
}

/// Encode `instrs` (64-bit code at address 0).
pub fn encode(instrs: &[Instruction]) -> Result<Encoded, CodegenError> {
    let mut enc = Encoder::try_with_capacity(64, instrs.len() * 6)?;
    let mut offsets = Vec::with_capacity(instrs.len());
    // Label id → offset of the instruction it marks.
    let mut labels: Vec<u32> = Vec::new();
    // (offset just past a rel32 field, label id)
    let mut fixups: Vec<(u32, u64)> = Vec::new();
    let mut pos: u32 = 0;
    for ins in instrs {
        offsets.push(pos);
        let id = ins.ip();
        if id != 0 {
            let id = id as usize;
            if labels.len() <= id {
                labels.resize(id + 1, u32::MAX);
            }
            labels[id] = pos;
        }
        let len = if is_label_branch(ins) {
            let mut near = *ins;
            near.set_code(ins.code().as_near_branch());
            // The target is fixed up below; any address in range will do.
            near.set_near_branch64(u64::from(pos));
            let len = enc.encode(&near, u64::from(pos))?;
            fixups.push((pos + len as u32, ins.near_branch64()));
            len
        } else {
            enc.encode(ins, u64::from(pos))?
        };
        pos += len as u32;
    }
    let mut code = enc.take_buffer();
    for (end, id) in fixups {
        let target = labels
            .get(id as usize)
            .copied()
            .filter(|&t| t != u32::MAX)
            .ok_or_else(|| error(format!("branch to the unbound label {id}")))?;
        let rel = i64::from(target) - i64::from(end);
        let rel = i32::try_from(rel).map_err(|_| error(format!("branch of {rel} bytes")))?;
        let end = end as usize;
        code[end - 4..end].copy_from_slice(&rel.to_le_bytes());
    }
    Ok(Encoded { code, offsets })
}

/// Whether `code` is the near (rel32) form of a branch (for tests).
pub fn is_near_branch(code: Code) -> bool {
    code.as_near_branch() == code && code.as_short_branch() != code
}

#[cfg(test)]
mod tests {
    use super::*;
    use iced_x86::code_asm::*;
    use iced_x86::{Decoder, DecoderOptions};

    /// Forward and backward branches, a call to a label, and ordinary
    /// instructions encode as iced's block encoder would place them (with
    /// near branches), and every branch lands on its label.
    #[test]
    fn branches_land_on_their_labels() {
        let mut a = CodeAssembler::new(64).unwrap();
        let mut top = a.create_label();
        let mut done = a.create_label();
        let mut func = a.create_label();
        a.set_label(&mut top).unwrap();
        a.mov(rax, qword_ptr(r15 + rcx * 8 + 16)).unwrap();
        a.cmp(rax, 5).unwrap();
        a.je(done).unwrap();
        a.call(func).unwrap();
        a.sub(r13, 1).unwrap();
        a.jb(top).unwrap();
        a.jmp(top).unwrap();
        a.set_label(&mut done).unwrap();
        a.ret().unwrap();
        a.set_label(&mut func).unwrap();
        a.mov(rax, 0x1122_3344_5566_7788u64).unwrap();
        a.ret().unwrap();
        let out = encode(a.instructions()).unwrap();
        let decoded: Vec<Instruction> = Decoder::with_ip(64, &out.code, 0, DecoderOptions::NONE)
            .into_iter()
            .collect();
        assert_eq!(decoded.len(), a.instructions().len());
        let at = |k: usize| u64::from(out.offsets[k]);
        for (k, d) in decoded.iter().enumerate() {
            assert_eq!(d.ip(), at(k), "instruction {k} starts where offsets say");
        }
        // je done → ret (7), call func → mov (8), jb/jmp top → 0.
        assert_eq!(decoded[2].near_branch64(), at(7));
        assert_eq!(decoded[3].near_branch64(), at(8));
        assert_eq!(decoded[5].near_branch64(), at(0));
        assert_eq!(decoded[6].near_branch64(), at(0));
        for k in [2, 5, 6] {
            assert!(is_near_branch(decoded[k].code()), "{:?}", decoded[k].code());
        }
        assert_eq!(decoded[8].immediate64(), 0x1122_3344_5566_7788);
    }

    #[test]
    fn a_branch_to_an_unbound_label_is_an_error() {
        let mut a = CodeAssembler::new(64).unwrap();
        let l = a.create_label();
        a.jmp(l).unwrap();
        assert!(encode(a.instructions()).is_err());
    }
}

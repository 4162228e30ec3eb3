//! One `lli-14` process running translated modules with the runtime of
//! [`super::runtime`]: the parent's side of the protocol, the environment
//! steps (taken with the interpreter's own `loadstar_env_step`) and the
//! conversion between the runtime's arena (references as addresses) and the
//! interpreter's (references as word offsets).

use super::runtime::VOLATILE;
use super::LliError;
use interp::env::{loadstar_env_step, EnvContext, EnvInfo};
use interp::heap::{decode_header, Layout, Shape, GLOBALS_BASE};
use interp::lower::{VF_BASE, VF_INDEX, VF_VALUE, VF_VALUE_REF};
use interp::observe::{observe, FinalState, RawValue};
use interp::Behaviour;
use ir::{Function, InputSpec, Module};
use std::io::{BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The `lli` binary: `LOADSTAR_LLI` if set, else `lli-14`.
pub fn lli_binary() -> String {
    std::env::var("LOADSTAR_LLI").unwrap_or_else(|_| "lli-14".to_string())
}

/// A running `lli` with the runtime and the translated modules loaded.
pub struct Session {
    child: Arc<Mutex<Child>>,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    /// The address of the runtime's arena (word 0).
    base: u64,
    /// Environment steps taken for this process so far.
    pub steps: u64,
    /// Dropping it stops the watchdog.
    _watchdog: mpsc::Sender<()>,
}

/// Temporary files of one start, removed when dropped.
struct TempFiles(Vec<std::path::PathBuf>);

impl Drop for TempFiles {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

static STARTS: AtomicU64 = AtomicU64::new(0);

impl Session {
    /// Start `lli` on the runtime (`main`) and the translation (an extra
    /// module); the process is killed after `timeout`.
    pub fn start(runtime: &str, translation: &str, timeout: Duration) -> Result<Session, LliError> {
        let k = STARTS.fetch_add(1, Ordering::Relaxed);
        let stem = std::env::temp_dir().join(format!("loadstar-lli-{}-{k}", std::process::id()));
        let files = TempFiles(vec![
            stem.with_extension("rt.ll"),
            stem.with_extension("ll"),
        ]);
        let io = |e: std::io::Error| LliError::Io(e.to_string());
        std::fs::write(&files.0[0], runtime).map_err(io)?;
        std::fs::write(&files.0[1], translation).map_err(io)?;
        let bin = lli_binary();
        let mut child = Command::new(&bin)
            .arg("-extra-module")
            .arg(&files.0[1])
            .arg(&files.0[0])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| LliError::NoLli(bin, e.to_string()))?;
        let input = BufWriter::new(child.stdin.take().expect("piped stdin"));
        let output = BufReader::new(child.stdout.take().expect("piped stdout"));
        let child = Arc::new(Mutex::new(child));
        let (tx, rx) = mpsc::channel::<()>();
        let dog = Arc::clone(&child);
        std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(timeout) {
                let _ = dog.lock().unwrap_or_else(|e| e.into_inner()).kill();
            }
        });
        let mut s = Session {
            child,
            input,
            output,
            base: 0,
            steps: 0,
            _watchdog: tx,
        };
        let hello = s.words(3)?;
        if hello[0] != 0 {
            return Err(s.failed("no greeting"));
        }
        s.base = hello[1];
        drop(files);
        Ok(s)
    }

    /// What went wrong, with `lli`'s standard error when it has ended.
    fn failed(&mut self, what: &str) -> LliError {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        let _ = child.kill();
        let mut err = String::new();
        if let Some(e) = child.stderr.as_mut() {
            let _ = e.read_to_string(&mut err);
        }
        let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
        LliError::Died(format!("{what} ({status}): {}", err.trim()))
    }

    fn words(&mut self, n: usize) -> Result<Vec<u64>, LliError> {
        let mut bytes = vec![0u8; 8 * n];
        if self.output.read_exact(&mut bytes).is_err() {
            return Err(self.failed("lli stopped"));
        }
        Ok(bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect())
    }

    fn word(&mut self) -> Result<u64, LliError> {
        Ok(self.words(1)?[0])
    }

    fn send(&mut self, words: &[u64]) -> Result<(), LliError> {
        let mut bytes = Vec::with_capacity(8 * words.len());
        for w in words {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        if self.input.write_all(&bytes).is_err() {
            return Err(self.failed("lli stopped reading"));
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), LliError> {
        if self.input.flush().is_err() {
            return Err(self.failed("lli stopped reading"));
        }
        Ok(())
    }

    /// Run driver entry `entry` (function `func` of `module`) on `spec`
    /// with an arena of at most `heap_words` words, and observe the end as
    /// the interpreter does.
    pub fn run(
        &mut self,
        module: &Module,
        info: &EnvInfo,
        (entry, func): (usize, &Function),
        spec: &InputSpec,
        heap_words: usize,
    ) -> Result<Behaviour, LliError> {
        let layout = &info.layout;
        let init = interp::heap::build_initial(layout, spec, heap_words)
            .map_err(|t| LliError::Inputs(t.to_string()))?;
        let mut words = init.heap.words;
        let conv = Conv { base: self.base };
        let param_ty = |i: usize| func.values[func.params[i].index()].ty;
        let args: Vec<u64> = (init.params.iter().enumerate())
            .map(|(i, &w)| conv.word(w, param_ty(i).is_ref()))
            .collect();
        let entry_roots: Vec<u64> = (init.params.iter().enumerate())
            .filter(|&(i, &w)| param_ty(i).is_ref() && w != 0)
            .map(|(_, &w)| w)
            .collect();
        conv.to_lli(layout, &mut words)?;
        self.send(&[entry as u64, words.len() as u64])?;
        self.send(&words)?;
        self.send(&[args.len() as u64])?;
        self.send(&args)?;
        self.flush()?;
        let mut ctx = EnvContext::new(info, entry_roots);
        let mut trace = Vec::new();
        loop {
            let head = self.words(3)?;
            match head[0] {
                1 => {
                    self.steps += 1;
                    self.step(module, &mut ctx, (head[1], head[2] as usize), &conv)?
                }
                2 => {
                    if head[1] == 1 {
                        let r = conv.of_lli(head[2], None)?;
                        trace.push(RawValue::Ref(r));
                        if r != 0 {
                            ctx.escaped.push(r);
                        }
                    } else {
                        trace.push(RawValue::Int(head[2] as i64));
                    }
                }
                3 => {
                    let mut words = self.arena()?;
                    let starts = conv.arena_of_lli(layout, &mut words)?;
                    let (returned, trap) = if head[1] == 0 {
                        let v = match func.ret {
                            None => None,
                            Some(t) if t.is_int() => Some(RawValue::Int(head[2] as i64)),
                            Some(_) => Some(RawValue::Ref(conv.of_lli(head[2], Some(&starts))?)),
                        };
                        (v, None)
                    } else {
                        let kind = super::super::translate::trap_kind(head[2] as i64)
                            .ok_or_else(|| LliError::Protocol(format!("trap code {}", head[2])))?;
                        (None, Some(kind))
                    };
                    // Escaped references are checked once the arena is known.
                    for &r in &ctx.escaped {
                        check_start(r, &starts)?;
                    }
                    return Ok(observe(
                        module,
                        layout,
                        &FinalState {
                            words: &words,
                            entry_roots: &ctx.entry_roots,
                            returned,
                            escaped: &ctx.escaped,
                            trace: &trace,
                            trap,
                        },
                    ));
                }
                t => return Err(LliError::Protocol(format!("message tag {t}"))),
            }
        }
    }

    /// The arena the runtime sends: its length, then its words.
    fn arena(&mut self) -> Result<Vec<u64>, LliError> {
        let n = self.word()? as usize;
        if n > 1 << 28 {
            return Err(LliError::Protocol(format!("arena of {n} words")));
        }
        self.words(n)
    }

    /// One environment step: read it, take it, send the result and arena back.
    fn step(
        &mut self,
        module: &Module,
        ctx: &mut EnvContext,
        (callee, nargs): (u64, usize),
        conv: &Conv,
    ) -> Result<(), LliError> {
        let info = unsafe { &*ctx.info };
        let layout = &info.layout;
        let mask = self.word()?;
        let raw = self.words(nargs)?;
        let mut words = self.arena()?;
        let starts = conv.arena_of_lli(layout, &mut words)?;
        let mut args = Vec::with_capacity(nargs);
        let mut vmask = 0u64;
        let ret_ref = if callee == VOLATILE {
            let [r, i, v, rv] = raw[..] else {
                return Err(LliError::Protocol("volatile step arity".into()));
            };
            let flags = mask as u32;
            if flags & VF_BASE != 0 {
                vmask |= 1 << args.len();
                args.push(conv.of_lli(r, Some(&starts))?);
            }
            if flags & VF_INDEX != 0 {
                args.push(i);
            }
            if flags & VF_VALUE != 0 {
                if flags & VF_VALUE_REF != 0 {
                    vmask |= 1 << args.len();
                    args.push(conv.of_lli(rv, Some(&starts))?);
                } else {
                    args.push(v);
                }
            }
            false
        } else {
            let e = module
                .externs
                .get(callee as usize)
                .ok_or_else(|| LliError::Protocol(format!("extern {callee}")))?;
            for (&w, t) in raw.iter().zip(&e.params) {
                args.push(if t.is_ref() {
                    conv.of_lli(w, Some(&starts))?
                } else {
                    w
                });
            }
            e.ret.is_some_and(|t| t.is_ref())
        };
        ctx.heap = words.as_mut_ptr();
        ctx.heap_len = words.len();
        // SAFETY: `ctx` describes `words`, a well-formed arena (checked by
        // `arena_of_lli`), and its `info`; `args` holds `args.len()` words,
        // and every reference among them is an object start of the arena.
        let r = unsafe {
            loadstar_env_step(ctx, callee as u32, args.as_ptr(), args.len() as u32, vmask)
        };
        ctx.heap = std::ptr::null_mut();
        ctx.heap_len = 0;
        let r = conv.word(r, ret_ref);
        conv.to_lli(layout, &mut words)?;
        self.send(&[r])?;
        self.send(&words)?;
        self.flush()
    }

    /// Tell the runtime to end and wait for it.
    pub fn quit(mut self) {
        let _ = self.send(&[u64::MAX]);
        let _ = self.flush();
        let _ = self.child.lock().unwrap_or_else(|e| e.into_inner()).wait();
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        if let Ok(None) = child.try_wait() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn check_start(r: u64, starts: &[bool]) -> Result<(), LliError> {
    if r != 0 && !starts.get(r as usize).copied().unwrap_or(false) {
        return Err(LliError::Protocol(format!(
            "reference to word {r}, no object there"
        )));
    }
    Ok(())
}

/// References between the two arenas: the runtime's reference to the object
/// whose header is word `r` is the address of word `r + 1`.
struct Conv {
    base: u64,
}

impl Conv {
    /// The runtime's form of interpreter word `w` (a reference when `is_ref`).
    fn word(&self, w: u64, is_ref: bool) -> u64 {
        if is_ref && w != 0 {
            self.base + 8 * (w + 1)
        } else {
            w
        }
    }

    /// The interpreter's form of runtime reference `p`; with `starts`, it
    /// must be an object of the arena.
    fn of_lli(&self, p: u64, starts: Option<&[bool]>) -> Result<u64, LliError> {
        if p == 0 {
            return Ok(0);
        }
        let off = p.wrapping_sub(self.base);
        if off < 16 || !off.is_multiple_of(8) {
            return Err(LliError::Protocol(format!(
                "address {p:#x} outside the arena"
            )));
        }
        let r = off / 8 - 1;
        if let Some(s) = starts {
            check_start(r, s)?;
        }
        Ok(r)
    }

    /// Convert every reference word of `words` (a runtime arena) to the
    /// interpreter's form; the object starts.
    fn arena_of_lli(&self, layout: &Layout, words: &mut [u64]) -> Result<Vec<bool>, LliError> {
        let refs = ref_words(layout, words)?;
        let mut starts = vec![false; words.len()];
        for &o in &refs.1 {
            starts[o] = true;
        }
        for &i in &refs.0 {
            words[i] = self.of_lli(words[i], None)?;
        }
        for &i in &refs.0 {
            check_start(words[i], &starts)?;
        }
        Ok(starts)
    }

    /// Convert every reference word of `words` (an interpreter arena) to the
    /// runtime's form.
    fn to_lli(&self, layout: &Layout, words: &mut [u64]) -> Result<(), LliError> {
        for i in ref_words(layout, words)?.0 {
            words[i] = self.word(words[i], true);
        }
        Ok(())
    }
}

/// The reference words of an arena (globals, then object slots) and the
/// object starts, walking the objects one after the other; an arena that
/// does not parse is a protocol error.
fn ref_words(layout: &Layout, words: &[u64]) -> Result<(Vec<usize>, Vec<usize>), LliError> {
    let bad = |what: String| Err(LliError::Protocol(what));
    let g = layout.globals.len();
    if words.len() < GLOBALS_BASE + g {
        return bad(format!("arena of {} words", words.len()));
    }
    let mut refs: Vec<usize> = (0..g)
        .filter(|&i| layout.globals[i].is_ref())
        .map(|i| GLOBALS_BASE + i)
        .collect();
    let mut starts = Vec::new();
    let mut at = GLOBALS_BASE + g;
    while at < words.len() {
        starts.push(at);
        if words[at] & 1 == 1 && (words[at] >> 1) & 0xff == 0 {
            return bad(format!("header {:#x} at word {at}", words[at]));
        }
        let (first, n, elem_ref) = match decode_header(words[at]) {
            Shape::Struct(s) => {
                let Some(fields) = layout.fields.get(s.index()) else {
                    return bad(format!("header {:#x} at word {at}", words[at]));
                };
                for (k, t) in fields.iter().enumerate() {
                    if t.is_ref() {
                        refs.push(at + 1 + k);
                    }
                }
                (at + 1, fields.len(), false)
            }
            Shape::Array(e) => {
                let n = words.get(at + 1).copied().unwrap_or(u64::MAX);
                if n > interp::MAX_ARRAY_LEN as u64 {
                    return bad(format!("array length {n} at word {at}"));
                }
                (at + 2, n as usize, e.is_ref())
            }
        };
        if first + n > words.len() {
            return bad(format!("object at word {at} runs past the arena"));
        }
        if elem_ref {
            refs.extend(first..first + n);
        }
        at = first + n;
    }
    Ok((refs, starts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use interp::heap::{array_header, struct_header};
    use ir::{StructId, Type};

    /// `type Node { val: i64, next: Node }`, one global `@g: Node`.
    fn layout() -> Layout {
        let node = Type::object(StructId(0));
        Layout {
            fields: vec![vec![Type::I64, node]],
            globals: vec![node],
            field_base: vec![0, 2],
        }
    }

    #[test]
    fn references_convert_both_ways_and_bad_arenas_are_protocol_errors() {
        let layout = layout();
        // [reserved, @g = #2, Node{7, next: #2} at 2, [Node]{#2, null} at 5]
        let node = struct_header(StructId(0));
        let arr = array_header(Type::object(StructId(0)));
        let interp_words = vec![0, 2, node, 7, 2, arr, 2, 2, 0];
        let (refs, starts) = ref_words(&layout, &interp_words).unwrap();
        assert_eq!(refs, vec![1, 4, 7, 8]);
        assert_eq!(starts, vec![2, 5]);
        let conv = Conv { base: 0x1000 };
        let mut words = interp_words.clone();
        conv.to_lli(&layout, &mut words).unwrap();
        assert_eq!(words[1], 0x1000 + 8 * 3);
        assert_eq!(words[8], 0, "null stays null");
        assert_eq!(words[3], 7, "integers stay");
        conv.arena_of_lli(&layout, &mut words).unwrap();
        assert_eq!(words, interp_words);
        // A reference into the middle of an object, and a header of no type.
        let mut inside = interp_words.clone();
        conv.to_lli(&layout, &mut inside).unwrap();
        inside[4] += 8;
        assert!(conv.arena_of_lli(&layout, &mut inside).is_err());
        let mut bad = interp_words.clone();
        bad[2] = 40;
        assert!(ref_words(&layout, &bad).is_err());
        assert!(conv.of_lli(0x1004, None).is_err(), "misaligned");
    }
}

//! The peephole fixed-point check after every single step
//! (`LOADSTAR_CHECK_FIXPOINT=step`) holds on generated programs: it once
//! blamed instructions the engine had taken off the worklist onto its
//! depth-first stack and not yet visited (three chained `sdiv %x, -1`).

use passes::peeps::{CheckMode, Peeps};
use passes::{Pass, Stats};
use verify::gen::{generate_from_seed, GenConfig};

#[test]
fn every_step_keeps_the_invariant_on_generated_programs() {
    let cfg = GenConfig::default();
    for seed in 0..3000u64 {
        let g = generate_from_seed(seed, &cfg);
        let mut m = g.module.clone();
        let pass = Peeps {
            seed,
            check: CheckMode::EveryStep,
            drop_deps_of: None,
        };
        if let Err(e) = pass.run_checked(&mut m, &mut Stats::default()) {
            panic!("seed {seed}: {e}\n{}", ir::print_module(&g.module));
        }
    }
}

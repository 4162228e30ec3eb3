//! The SMT oracle's counters: verdicts per query (one function of one pass
//! plan), the time of each query, and the summary lines and JSON figures the
//! sweep prints (rates, median and 95th-percentile time per query).

use serde::Serialize;
use std::fmt::Write;
use std::time::Duration;

/// What the SMT oracle saw, for one program or summed over a sweep.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SmtCounts {
    /// Programs the SMT oracle was sampled on.
    pub programs: u64,
    /// Queries asked (functions × plans whose function changed).
    pub queries: u64,
    /// Functions a plan left unchanged (no query: equal by construction).
    pub unchanged: u64,
    /// Functions of a plan whose output module an earlier plan of the same
    /// program already produced (no query: checked already).
    pub repeated: u64,
    /// Fully proved.
    pub proved: u64,
    /// Proved for executions within the unrolling bound.
    pub bounded: u64,
    /// Counterexamples the interpreter confirmed (`mismatch-smt`).
    pub counterexample: u64,
    /// Counterexamples the interpreter did not confirm (`smt-unconfirmed`, checker bugs).
    pub unconfirmed: u64,
    /// Solver gave up (timeout, resource limit) or the replay was inconclusive.
    pub unknown: u64,
    /// The encoder could not express the function.
    pub unsupported: u64,
    /// Time of every query, in microseconds (not in the JSON: see [`SmtSummary`]).
    #[serde(skip)]
    pub times_us: Vec<u64>,
}

/// One query's verdict class, for [`SmtCounts::add`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SmtClass {
    /// Proved.
    Proved,
    /// Proved within the bound.
    Bounded,
    /// A confirmed counterexample.
    Counterexample,
    /// An unconfirmed counterexample.
    Unconfirmed,
    /// Unknown.
    Unknown,
    /// Unsupported.
    Unsupported,
}

impl SmtCounts {
    /// Count one query of class `c` that took `time`.
    pub fn add(&mut self, c: SmtClass, time: Duration) {
        self.queries += 1;
        self.times_us.push(time.as_micros() as u64);
        *match c {
            SmtClass::Proved => &mut self.proved,
            SmtClass::Bounded => &mut self.bounded,
            SmtClass::Counterexample => &mut self.counterexample,
            SmtClass::Unconfirmed => &mut self.unconfirmed,
            SmtClass::Unknown => &mut self.unknown,
            SmtClass::Unsupported => &mut self.unsupported,
        } += 1;
    }

    /// Add another program's or worker's counts.
    pub fn merge(&mut self, o: &SmtCounts) {
        self.programs += o.programs;
        self.queries += o.queries;
        self.unchanged += o.unchanged;
        self.repeated += o.repeated;
        self.proved += o.proved;
        self.bounded += o.bounded;
        self.counterexample += o.counterexample;
        self.unconfirmed += o.unconfirmed;
        self.unknown += o.unknown;
        self.unsupported += o.unsupported;
        self.times_us.extend_from_slice(&o.times_us);
    }

    /// The rates and times of these counts.
    pub fn summary(&self) -> SmtSummary {
        let mut t = self.times_us.clone();
        t.sort_unstable();
        let pct = |p: f64| {
            t.get(((t.len() as f64 - 1.0) * p).round() as usize)
                .map_or(0.0, |&us| us as f64 / 1e3)
        };
        let rate = |x: u64| super::totals::pct(x, self.queries);
        SmtSummary {
            programs: self.programs,
            queries: self.queries,
            unchanged: self.unchanged,
            repeated: self.repeated,
            proved_pct: rate(self.proved),
            bounded_pct: rate(self.bounded),
            counterexample: self.counterexample,
            unconfirmed: self.unconfirmed,
            unknown_pct: rate(self.unknown),
            unsupported_pct: rate(self.unsupported),
            median_ms: pct(0.5),
            p95_ms: pct(0.95),
        }
    }

    /// The summary lines of a sweep (empty when the oracle never ran).
    pub fn render(&self) -> String {
        if self.programs == 0 {
            return String::new();
        }
        let s = self.summary();
        let mut out = String::from("smt oracle\n");
        let mut row = |k: &str, v: String| {
            let _ = writeln!(out, "  {k:<28} {v}");
        };
        row("programs sampled", s.programs.to_string());
        row(
            "queries",
            format!(
                "{} ({} functions unchanged, {} repeated)",
                s.queries, s.unchanged, s.repeated
            ),
        );
        row(
            "proved / bounded %",
            format!("{:.1} / {:.1}", s.proved_pct, s.bounded_pct),
        );
        row(
            "counterexample / unconfirmed",
            format!("{} / {}", s.counterexample, s.unconfirmed),
        );
        row(
            "unknown / unsupported %",
            format!("{:.1} / {:.1}", s.unknown_pct, s.unsupported_pct),
        );
        row(
            "time per query",
            format!("median {:.1} ms, p95 {:.1} ms", s.median_ms, s.p95_ms),
        );
        out
    }
}

/// The SMT figures of a sweep's JSON report.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct SmtSummary {
    /// Programs sampled.
    pub programs: u64,
    /// Queries asked.
    pub queries: u64,
    /// Functions left unchanged by their plan (not queried).
    pub unchanged: u64,
    /// Functions of a plan whose output an earlier plan produced (not queried).
    pub repeated: u64,
    /// Proved, percent of queries.
    pub proved_pct: f64,
    /// Proved within the bound, percent.
    pub bounded_pct: f64,
    /// Confirmed counterexamples.
    pub counterexample: u64,
    /// Unconfirmed counterexamples (checker bugs).
    pub unconfirmed: u64,
    /// Unknown, percent.
    pub unknown_pct: f64,
    /// Unsupported, percent.
    pub unsupported_pct: f64,
    /// Median time per query, ms.
    pub median_ms: f64,
    /// 95th-percentile time per query, ms.
    pub p95_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_percentiles_follow_the_queries() {
        let mut a = SmtCounts {
            programs: 1,
            ..SmtCounts::default()
        };
        for ms in 1..=19 {
            a.add(SmtClass::Proved, Duration::from_millis(ms));
        }
        let mut b = SmtCounts {
            programs: 1,
            ..SmtCounts::default()
        };
        b.add(SmtClass::Unknown, Duration::from_millis(1000));
        a.merge(&b);
        let s = a.summary();
        assert_eq!((s.programs, s.queries), (2, 20));
        assert_eq!(s.proved_pct, 95.0);
        assert_eq!(s.unknown_pct, 5.0);
        assert_eq!(s.median_ms, 11.0);
        assert_eq!(s.p95_ms, 19.0);
        assert!(a.render().contains("median 11.0 ms, p95 19.0 ms"));
        assert!(SmtCounts::default().render().is_empty());
    }
}

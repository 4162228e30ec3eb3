//! The Markdown summary of a night (the workflow's job summary): new, known
//! and fixed signatures, counts per oracle, each shard's programs, throughput
//! and replay command, and the outputs that were skipped.

use super::{Report, Signature, Status};
use std::fmt::Write;

/// Digits grouped by thousands (`1,234,567`).
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// `|` and newlines would break a table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The summary as Markdown.
pub fn markdown(r: &Report) -> String {
    let mut s = String::new();
    let verdict = if r.new > 0 { "FAIL" } else { "ok" };
    let _ = writeln!(
        s,
        "# loadstar nightly: {verdict} — {} new, {} known, {} fixed since last\n",
        r.new, r.known, r.fixed
    );
    let _ = writeln!(
        s,
        "{} programs checked by {} sweep shards; {} fuzz artifact directories; {} outputs skipped.\n",
        thousands(r.programs),
        r.shards.iter().filter(|x| x.sweep.is_some()).count(),
        r.shards.iter().filter(|x| x.sweep.is_none()).count(),
        r.skipped.len()
    );
    section(
        &mut s,
        "New signatures",
        r.signatures.iter().filter(|x| x.status == Status::New),
    );
    section(
        &mut s,
        "Known signatures",
        r.signatures.iter().filter(|x| x.status == Status::Known),
    );
    let _ = writeln!(s, "## Fixed since last ({})\n", r.fixed);
    if r.fixed_signatures.is_empty() {
        s.push_str("None: every known signature was seen tonight.\n\n");
    } else {
        s.push_str("Listed in the known-findings file, not seen tonight (remove the line once it is fixed):\n\n");
        for k in &r.fixed_signatures {
            let _ = writeln!(s, "- `{}` (line {}: {})", k.signature, k.line, k.comment);
        }
        s.push('\n');
    }
    s.push_str("## Oracles\n\n| oracle | checked | new | known | hits |\n| --- | --- | ---: | ---: | ---: |\n");
    for (name, o) in &r.oracles {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} |",
            o.work,
            o.new,
            o.known,
            thousands(o.hits)
        );
    }
    s.push_str("\n## Shards\n\n| shard | seed | programs | seconds | programs/s | signatures | replay |\n| --- | --- | ---: | ---: | ---: | ---: | --- |\n");
    for sh in &r.shards {
        match &sh.sweep {
            Some(w) => {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {:.0} | {:.0} | {} | `loadstar sweep --seed {} --shard {}` |",
                    cell(&sh.name),
                    w.seed,
                    thousands(w.programs),
                    w.seconds,
                    w.programs_per_second,
                    sh.distinct,
                    w.seed,
                    w.shard
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "| {} | fuzz | {} artifacts | | | {} | `loadstar repro ARTIFACT --target T` |",
                    cell(&sh.name),
                    sh.artifacts,
                    sh.distinct
                );
            }
        }
    }
    if !r.skipped.is_empty() {
        let _ = writeln!(s, "\n## Skipped outputs ({})\n", r.skipped.len());
        for k in &r.skipped {
            let _ = writeln!(s, "- `{}`: {}", k.name, k.reason);
        }
    }
    s
}

/// `1 hit`, `2 hits`, `1,000 hits`.
fn plural(n: u64, what: &str) -> String {
    format!("{} {what}{}", thousands(n), if n == 1 { "" } else { "s" })
}

/// Lines of a repro shown in the summary (the whole text is in the JSON report).
const EXCERPT_LINES: usize = 40;

/// The repro without its detail comments (`;   | ...`, which repeat the
/// module), cut after [`EXCERPT_LINES`] lines.
fn excerpt(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with(";   |")).collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(EXCERPT_LINES)
        .map(|l| l.to_string())
        .collect();
    if lines.len() > EXCERPT_LINES {
        out.push(format!(
            "… {} more lines in the JSON report",
            lines.len() - EXCERPT_LINES
        ));
    }
    out
}

/// A list of signatures with their smallest repro.
fn section<'a>(s: &mut String, title: &str, sigs: impl Iterator<Item = &'a Signature>) {
    let sigs: Vec<&Signature> = sigs.collect();
    let _ = writeln!(s, "## {title} ({})\n", sigs.len());
    if sigs.is_empty() {
        s.push_str("None.\n\n");
        return;
    }
    for g in sigs {
        let size = match g.repro.lines {
            Some(n) => format!("{n} IR lines"),
            None => format!("{} bytes, raw input", g.repro.bytes),
        };
        let _ = writeln!(
            s,
            "- `{}` — {} oracle, {} in {} ({}); smallest repro `{}` ({size}){}",
            g.signature,
            g.oracle,
            plural(g.hits, "hit"),
            plural(g.shards.len() as u64, "shard"),
            g.shards.join(", "),
            g.repro.source,
            g.known_because
                .as_deref()
                .map(|c| format!("; known: {c}"))
                .unwrap_or_default()
        );
        if let (Status::New, Some(text)) = (g.status, &g.repro.text) {
            s.push_str("\n  ```\n");
            for line in excerpt(text) {
                let _ = writeln!(s, "  {line}");
            }
            s.push_str("  ```\n");
        }
    }
    s.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}

//! The findings directory: every finding is deduplicated by signature and
//! written atomically (temporary file, then rename) as soon as it is found, so
//! a sweep killed at any moment loses no finding it already reported.

use crate::oracle::Finding;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Deduplicating, crash-safe writer of findings.
pub struct FindingStore {
    dir: PathBuf,
    seen: Mutex<BTreeMap<String, (PathBuf, u64)>>,
}

impl FindingStore {
    /// A store writing into `dir` (created if missing).
    pub fn new(dir: &Path) -> std::io::Result<FindingStore> {
        std::fs::create_dir_all(dir)?;
        Ok(FindingStore {
            dir: dir.to_path_buf(),
            seen: Mutex::new(BTreeMap::new()),
        })
    }

    /// Record `finding`; writes its reproducer if its signature is new.
    /// Returns the path written, or `None` for a duplicate.
    pub fn record(&self, finding: &Finding) -> std::io::Result<Option<PathBuf>> {
        let sig = finding.signature();
        let path = self.dir.join(format!("{}.ir", finding.file_stem()));
        {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(entry) = seen.get_mut(&sig) {
                entry.1 += 1;
                return Ok(None);
            }
            seen.insert(sig, (path.clone(), 1));
        }
        write_atomically(&path, finding.to_test_text().as_bytes())?;
        Ok(Some(path))
    }

    /// Every distinct signature with its file and how often it was hit.
    pub fn signatures(&self) -> Vec<(String, PathBuf, u64)> {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.iter()
            .map(|(s, (p, n))| (s.clone(), p.clone(), *n))
            .collect()
    }
}

/// Write `bytes` to `path` via a temporary file in the same directory and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

//! `<config dir>/policy.json` on disk: `{"rules": [Rule, ...]}`, read again whenever its
//! modification time or length changed (so a human's edits apply at once, and an unchanged file
//! is not parsed on every call), and written whole (a temporary file renamed over it) under a
//! lock. A file that is not valid is reported once per version, with its path and the problem,
//! and holds no rules; the rules in force ([`PolicyFile::in_force`]) are then those it held when
//! last valid, so a typo never lifts a deny rule. Each version of the file has a [`PolicyFile::version`] (a hash of its
//! bytes), so that a writer that read one version can refuse to overwrite another
//! ([`PolicyFile::replace_if`]).

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::SystemTime,
};

use serde::{Deserialize, Serialize};

use super::{rules::Rule, terms::ApprovalTerms};

/// A rule of `policy.json` that can never match a call, and why ([`PolicyDocument::never_matching`]).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct RuleWarning {
    /// The rule's id.
    pub rule: String,
    /// Its position in the file, from 1.
    pub position: usize,
    /// Why it never matches, and what to write instead.
    pub why: String,
}

/// What `policy.json` holds.
#[derive(Debug, Default, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyDocument {
    /// The rules, first match wins.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// Terms for every `ask` no rule sets terms for (see [`super::terms`]).
    #[serde(
        default,
        skip_serializing_if = "ApprovalTerms::is_empty",
        deserialize_with = "super::terms::from_object"
    )]
    pub approval: ApprovalTerms,
}

impl PolicyDocument {
    /// Checks every rule ([`Rule::check`]) and that no two share an id. Errors: the first
    /// problem, naming the rule's position (from 1).
    pub fn check(&self) -> Result<(), String> {
        self.approval.check()?;
        for (i, rule) in self.rules.iter().enumerate() {
            rule.check().map_err(|e| format!("rule {}: {e}", i + 1))?;
            if self.rules[..i].iter().any(|r| r.id == rule.id) {
                return Err(format!("rule {}: id {} is used twice", i + 1, rule.id));
            }
        }
        Ok(())
    }

    /// The rules that can never match a call ([`Rule::never_matches`]), in order: `PUT
    /// /v1/policy` refuses new ones, but one written into the file by hand is read, stays,
    /// and decides nothing until it is fixed.
    pub fn never_matching(&self) -> Vec<RuleWarning> {
        self.rules
            .iter()
            .enumerate()
            .filter_map(|(i, rule)| {
                rule.never_matches().map(|why| RuleWarning {
                    rule: rule.id.clone(),
                    position: i + 1,
                    why,
                })
            })
            .collect()
    }
}

/// The file as last read: its stamp, its version and what it held (or why it holds nothing).
struct Loaded {
    stamp: Option<(SystemTime, u64)>,
    version: String,
    content: Arc<Result<PolicyDocument, String>>,
}

/// Why [`PolicyFile::replace_if`] wrote nothing.
#[derive(Debug)]
pub enum ReplaceError {
    /// The file is no longer the version the writer read: it holds `current`.
    Changed {
        /// The file's version now.
        current: String,
    },
    /// The file cannot be written.
    Io(std::io::Error),
}

/// The version of a file holding `bytes`: the first 16 bytes of their SHA-256, in hex (a
/// missing file holds no bytes).
fn version_of(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(&sha2::Sha256::digest(bytes)[..16])
}

/// The policy file, cached by modification time and length.
pub struct PolicyFile {
    path: PathBuf,
    cache: Mutex<Option<Loaded>>,
    /// What the file held when it was last read valid (by this process), if it ever was.
    last_valid: Mutex<Option<Arc<Result<PolicyDocument, String>>>>,
    /// Held across read-change-write, so two writers never lose each other's change.
    write_lock: Mutex<()>,
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

impl PolicyFile {
    /// The file at `path` (it need not exist).
    pub fn new(path: PathBuf) -> PolicyFile {
        PolicyFile {
            path,
            cache: Mutex::new(None),
            last_valid: Mutex::new(None),
            write_lock: Mutex::new(()),
        }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's version and what it holds.
    fn parse(&self) -> (String, Result<PolicyDocument, String>) {
        let bytes = match std::fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return (version_of(&[]), Ok(PolicyDocument::default()));
            }
            Err(e) => return (version_of(&[]), Err(format!("cannot be read: {e}"))),
        };
        let version = version_of(&bytes);
        let text = match String::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => return (version, Err(format!("is not UTF-8 text: {e}"))),
        };
        // What a save cut short leaves: no rules is written `{"rules": []}`, or no file.
        if text.trim().is_empty() {
            return (
                version,
                Err(
                    "is empty (a save cut short?): write {\"rules\": []} for no rules, or \
                     delete the file"
                        .into(),
                ),
            );
        }
        let doc = serde_json::from_str::<PolicyDocument>(&text)
            .map_err(|e| format!("is not a valid policy: {e}"))
            .and_then(|mut doc| {
                // A hand-written rule may come without an id: it gets one for as long as the
                // file is unchanged (a write stores it).
                doc.rules.iter_mut().for_each(Rule::assign_id);
                doc.check().map(|()| doc)
            });
        (version, doc)
    }

    /// What the file holds now: its rules, or why it holds none (it is not valid JSON of the
    /// policy's shape, a rule is not valid, or it is empty). A missing file holds no rules.
    pub fn read(&self) -> Arc<Result<PolicyDocument, String>> {
        self.read_versioned().1
    }

    /// The file's version now: what [`PolicyFile::replace_if`] compares.
    pub fn version(&self) -> String {
        self.read_versioned().0
    }

    /// [`PolicyFile::read`] with the version of the file it read.
    pub fn read_versioned(&self) -> (String, Arc<Result<PolicyDocument, String>>) {
        let now = stamp(&self.path);
        let mut cache = self.cache.lock().unwrap();
        if let Some(loaded) = cache.as_ref()
            && loaded.stamp == now
            && now.is_some()
        {
            return (loaded.version.clone(), loaded.content.clone());
        }
        let (version, content) = self.parse();
        let content = Arc::new(content);
        match content.as_ref() {
            Err(problem) => tracing::warn!(
                "the policy file {} {problem}; until it is fixed, the rules it held when last \
                 valid apply (none when it was not valid since Taskdeck started: then every \
                 call that would run by default is asked)",
                self.path.display()
            ),
            Ok(doc) => {
                *self.last_valid.lock().unwrap() = Some(content.clone());
                for warning in doc.never_matching() {
                    tracing::warn!(
                        "the policy file {}: rule {} ({}) never matches: {}",
                        self.path.display(),
                        warning.position,
                        warning.rule,
                        warning.why
                    );
                }
            }
        }
        *cache = Some(Loaded {
            stamp: now,
            version: version.clone(),
            content: content.clone(),
        });
        (version, content)
    }

    /// The rules that apply now: the file's when it is valid; while it is not, those it held
    /// when last read valid since Taskdeck started (`None` when it never was), with why it is
    /// not valid (the second member, `None` for a valid file).
    pub fn in_force(&self) -> (Option<Arc<Result<PolicyDocument, String>>>, Option<String>) {
        let now = self.read();
        match now.as_ref() {
            Ok(_) => (Some(now), None),
            Err(problem) => (
                self.last_valid.lock().unwrap().clone(),
                Some(problem.clone()),
            ),
        }
    }

    /// Applies `change` to the rules and writes the file (pretty JSON, via a temporary file
    /// renamed over it; the directory is created when missing). Errors: the file is not valid
    /// now (a human's file is never overwritten by a change to what could not be read), or it
    /// cannot be written.
    pub fn update<T>(&self, change: impl FnOnce(&mut PolicyDocument) -> T) -> std::io::Result<T> {
        let _g = self.write_lock.lock().unwrap();
        let mut doc = match self.read().as_ref() {
            Ok(doc) => doc.clone(),
            Err(problem) => {
                return Err(std::io::Error::other(format!(
                    "{} {problem}",
                    self.path.display()
                )));
            }
        };
        let out = change(&mut doc);
        self.write(&doc)?;
        Ok(out)
    }

    /// Writes `doc` as the whole file if it is still at version `expected` (whatever it holds
    /// when `None`), and returns the new version. Errors: [`ReplaceError::Changed`] when the
    /// file is at another version (a change since the writer read it: nothing is written),
    /// [`ReplaceError::Io`] when it cannot be written.
    pub fn replace_if(
        &self,
        doc: &PolicyDocument,
        expected: Option<&str>,
    ) -> Result<String, ReplaceError> {
        let _g = self.write_lock.lock().unwrap();
        if let Some(expected) = expected {
            // Read from the file itself, not the cache: an edit within one mtime tick that
            // kept the length would look unchanged to the cache.
            *self.cache.lock().unwrap() = None;
            let current = self.version();
            if current != expected {
                return Err(ReplaceError::Changed { current });
            }
        }
        self.write(doc).map_err(ReplaceError::Io)?;
        Ok(self.version())
    }

    fn write(&self, doc: &PolicyDocument) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = self.path.with_extension("json.tmp");
        let mut bytes = serde_json::to_vec_pretty(doc)?;
        bytes.push(b'\n');
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, &self.path)?;
        // The next read parses what was written (a write within the same mtime tick and of the
        // same length would otherwise look unchanged).
        *self.cache.lock().unwrap() = None;
        Ok(())
    }
}

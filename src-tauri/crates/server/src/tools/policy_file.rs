//! A policy file in the config dir: JSON, re-read on every use (so a human's edits apply at
//! once) and changed whole, under a lock, by read-change-write. The command policy
//! (`command-policy.json`) and the HTTP jobs' policy (`http-policy.json`) are such files.

use std::{marker::PhantomData, path::PathBuf, sync::Mutex};

use serde::{Serialize, de::DeserializeOwned};

/// One policy file holding a `T`.
pub struct PolicyFile<T> {
    path: PathBuf,
    lock: Mutex<()>,
    content: PhantomData<fn() -> T>,
}

impl<T: Default + Serialize + DeserializeOwned> PolicyFile<T> {
    /// The file at `path` (it need not exist yet).
    pub fn new(path: PathBuf) -> PolicyFile<T> {
        PolicyFile {
            path,
            lock: Mutex::new(()),
            content: PhantomData,
        }
    }

    fn load(&self) -> T {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default()
    }

    /// The content now: `T::default()` when the file is missing or is not JSON of `T`'s shape.
    pub fn read(&self) -> T {
        let _g = self.lock.lock().unwrap();
        self.load()
    }

    /// Applies `change` to the content and writes the file again (pretty JSON; its directory is
    /// created when missing). Errors: the file cannot be written.
    pub fn update(&self, change: impl FnOnce(&mut T)) -> std::io::Result<()> {
        let _g = self.lock.lock().unwrap();
        let mut content = self.load();
        change(&mut content);
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&self.path, serde_json::to_vec_pretty(&content)?)
    }
}

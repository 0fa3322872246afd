//! How `taskdeck hook install|uninstall` writes an agent's settings file (`settings.json`,
//! `hooks.json`, `config.toml`): only when its text changes, through a temp file renamed over
//! it, and after a backup (`<file>.taskdeck-backup`) that always holds the file as it was
//! before Taskdeck's first change. A settings file that is a symlink (a dotfiles or stow setup)
//! is written at its target and stays a link; the backup lies beside the target.

use std::{
    io::Write,
    path::{Path, PathBuf},
};

/// How many links [`resolve`] follows before it calls the chain a loop.
const MAX_LINKS: usize = 40;

/// The file `path` stands for: the end of its chain of symlinks (a relative link is taken from
/// the link's directory; the last target need not exist yet), else `path` itself.
/// Errors: a link that cannot be read, or a chain longer than [`MAX_LINKS`].
pub fn resolve(path: &Path) -> Result<PathBuf, String> {
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&at)
                    .map_err(|e| format!("cannot read the link {}: {e}", at.display()))?;
                at = match at.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(format!("{}: too many levels of links", path.display()))
}

/// The backup of the file at `target` (a resolved path): `<target>.taskdeck-backup`.
pub fn backup_path(target: &Path) -> PathBuf {
    let mut backup = target.as_os_str().to_owned();
    backup.push(".taskdeck-backup");
    PathBuf::from(backup)
}

/// Writes `bytes`, `target`'s text, to its backup with `target`'s permissions: a settings file
/// kept private (0600, it may hold an API key) has a backup no one else reads either. The file
/// is made owner-only before anything is written to it.
fn save_backup(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let path = backup_path(target);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options.open(&path)?;
    #[cfg(unix)]
    f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    f.write_all(bytes)?;
    if let Ok(meta) = std::fs::metadata(target) {
        f.set_permissions(meta.permissions())?;
    }
    Ok(())
}

/// Makes the file at `path` (through its links, [`resolve`]) hold `text`. Nothing is written
/// when it already holds exactly that; returns whether it wrote.
///
/// `pristine`: the file as it is now holds none of Taskdeck's changes. Only such a file is
/// copied to the backup before it is replaced, so the backup keeps the file from before
/// Taskdeck's first change: installing again, updating Taskdeck's entries or uninstalling
/// leave it as it is. The new text goes to a temp file beside the target (with the target's
/// permissions) that is renamed over it, so the agent never reads half a file.
/// Errors: a file or directory that cannot be read, created or written.
pub fn write(path: &Path, text: &str, pristine: bool) -> Result<bool, String> {
    let target = resolve(path)?;
    let current = match std::fs::read(&target) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", target.display())),
    };
    if current.as_deref() == Some(text.as_bytes()) {
        return Ok(false);
    }
    let dir = target.parent().ok_or("no parent directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    if let Some(current) = &current
        && pristine
    {
        save_backup(&target, current)
            .map_err(|e| format!("cannot save a backup of {}: {e}", target.display()))?;
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| e.to_string())?;
    tmp.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
    if let Ok(meta) = std::fs::metadata(&target) {
        let _ = tmp.as_file().set_permissions(meta.permissions());
    }
    tmp.persist(&target)
        .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backup_keeps_the_file_from_before_the_first_change() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        let backup = backup_path(&file);
        std::fs::write(&file, "original").unwrap();
        assert!(write(&file, "installed", true).unwrap());
        assert!(!write(&file, "installed", false).unwrap());
        assert!(write(&file, "updated", false).unwrap());
        assert!(write(&file, "original", false).unwrap());
        assert_eq!(std::fs::read_to_string(&backup).unwrap(), "original");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "original");
    }

    #[cfg(unix)]
    #[test]
    fn a_private_file_has_a_private_backup() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        std::fs::write(&file, r#"{"env": {"ANTHROPIC_API_KEY": "sk-ant-x"}}"#).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(write(&file, "{}", true).unwrap());
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&backup_path(&file)), 0o600);
        assert_eq!(mode(&file), 0o600);
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_file_is_written_at_its_target_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("dotfiles")).unwrap();
        std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
        let target = dir.path().join("dotfiles/settings.json");
        let link = dir.path().join(".claude/settings.json");
        std::fs::write(&target, "original").unwrap();
        std::os::unix::fs::symlink("../dotfiles/settings.json", &link).unwrap();
        assert!(write(&link, "installed", true).unwrap());
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "installed");
        assert_eq!(
            std::fs::read_to_string(backup_path(&target)).unwrap(),
            "original"
        );
        assert!(!backup_path(&link).exists());
    }
}

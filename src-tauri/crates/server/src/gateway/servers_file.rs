//! `<config dir>/servers.json`: the upstream MCP servers Taskdeck connects to and serves behind
//! its own endpoint. One object per server, keyed by its name (`[a-z0-9_-]`, 1 to 64 characters):
//!
//! ```json
//! {"servers": {
//!   "fs":   {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
//!            "env": {"DEBUG": "1"}, "cwd": "/home/me"},
//!   "docs": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ..."}},
//!   "old":  {"command": "old-server", "disabled": true}
//! }}
//! ```
//!
//! A server with `command` is started as a child process and spoken to over stdio; one with
//! `url` over Streamable HTTP. Values in `env` and `headers` are secrets: they reach only the
//! upstream, never a view (see [`ServerSpec::public`](super::server_target)). So the file is
//! written with mode 0600, whole (a temp file renamed over it), and changed only under a lock
//! (`servers.json.lock` beside it), so that the CLI and a running Taskdeck adding servers at
//! the same moment do not lose one of the two.

use std::{
    collections::BTreeMap,
    io::Write,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

/// How to reach one upstream MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Transport {
    /// A child process speaking MCP over stdin/stdout (stderr is kept as a tail for the human).
    Stdio {
        /// The program to run, a path or a name looked up in `PATH`.
        command: String,
        /// Its arguments.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        /// Variables added to its environment, which otherwise holds only the usual login
        /// variables (`PATH`, `HOME`, ...), none of Taskdeck's own.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
        /// Its working directory (absent: Taskdeck's).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint; `headers` are sent with every request (e.g. `Authorization`).
    Http {
        /// The endpoint's `http` or `https` URL.
        url: String,
        /// Header name → value.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<String, String>,
    },
}

/// One entry of `servers.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerSpec {
    /// How to reach it; its members are the entry's own (`command`... or `url`...).
    #[serde(flatten)]
    pub transport: Transport,
    /// A disabled server stays in the file but is not started.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// How long one call may take before Taskdeck gives up on it, in milliseconds (default
    /// 10 minutes).
    #[serde(default, rename = "timeoutMs", skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServersConfig {
    /// The readable entries, name → spec.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerSpec>,
    /// Entries that are not a server spec (written by hand: both `command` and `url`, a field
    /// of the wrong type), by name: not started, shown `failed` saying why, and written back
    /// as they are by [`ServersConfig::save`], so that editing the file with the CLI or the
    /// window does not lose them.
    #[serde(skip)]
    pub unreadable: BTreeMap<String, Unreadable>,
}

/// An entry of `servers.json` that is not a server spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The entry as written.
    pub raw: serde_json::Value,
    /// Why it is not a spec, e.g. "both `command` and `url`: give one".
    pub problem: String,
}

impl ServersConfig {
    /// True when the file has an entry named `name`, readable or not.
    pub fn has(&self, name: &str) -> bool {
        self.servers.contains_key(name) || self.unreadable.contains_key(name)
    }
}

/// The file's name in the config dir.
pub const FILE_NAME: &str = "servers.json";

/// The members an entry may have. Any other (a typo such as `header`) makes the entry
/// unreadable rather than ignored: ignored, it would be dropped at the next save.
pub const ENTRY_FIELDS: [&str; 8] = [
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "timeoutMs",
    "disabled",
];

/// The name of Taskdeck's own tools in the policy; no upstream may take it.
pub const RESERVED_NAME: &str = "taskdeck";

/// The longest server name, in characters.
pub const MAX_NAME_LEN: usize = 64;

/// `<config_dir>/servers.json`.
pub fn servers_path(config_dir: &Path) -> PathBuf {
    config_dir.join(FILE_NAME)
}

/// What can go wrong reading or changing servers.json; each message names what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ServersFileError {
    /// The file is not JSON of the expected shape; `problem` is serde's message, with line
    /// and column.
    #[error("{path} is not a valid servers file: {problem}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// serde's message.
        problem: String,
    },
    /// The file exists but cannot be read (a missing file is no servers).
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file, its directory or its lock file cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// What could not be written.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A name outside `^[a-z0-9_-]{1,64}$`, with `__`, or `taskdeck`.
    #[error("{0}")]
    BadName(String),
    /// A spec that cannot be started: empty command, URL that is not http(s), bad header.
    #[error("{0}")]
    BadSpec(String),
    /// `add` of a name the file already has (HTTP 409).
    #[error("a server named {0:?} already exists (remove it first)")]
    Exists(String),
    /// `remove` of a name the file does not have (HTTP 404).
    #[error("no server named {0:?}")]
    Unknown(String),
}

/// Checks a server name: 1 to 64 of `a-z 0-9 _ -`, starting with a letter or digit, no `__` (it
/// separates server and tool in `NAME__TOOL`), not ending with `_` (`co_` + `dup` and `co` +
/// `_dup` would both be `co___dup`), and not [`RESERVED_NAME`]. Errors:
/// [`ServersFileError::BadName`] saying which rule failed.
pub fn validate_name(name: &str) -> Result<(), ServersFileError> {
    let bad = |why: &str| {
        Err(ServersFileError::BadName(format!(
            "bad server name {name:?}: {why}"
        )))
    };
    if name.is_empty() || name.len() > MAX_NAME_LEN {
        return bad("it must be 1 to 64 characters long");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
    {
        return bad("use only lowercase letters, digits, '_' and '-'");
    }
    if name.starts_with(['-', '_']) {
        return bad("it must start with a letter or a digit");
    }
    if name.contains("__") {
        return bad("'__' separates a server's name from its tools' names");
    }
    if name.ends_with('_') {
        return bad("it must not end with '_' (SERVER__TOOL would not say where the name ends)");
    }
    if name == RESERVED_NAME {
        return bad("\"taskdeck\" names Taskdeck's own tools");
    }
    Ok(())
}

/// Why server `name` of the file, with `spec`, is not started: `not started: <the rule it
/// breaks>` for a name or spec the CLI would refuse ([`validate_name`], [`ServerSpec::validate`]);
/// `None` when it may be.
pub fn refusal(name: &str, spec: &ServerSpec) -> Option<String> {
    validate_name(name)
        .and_then(|()| spec.validate())
        .err()
        .map(|problem| format!("not started: {problem}"))
}

/// Why `spec` may not be an upstream of the Taskdeck listening on 127.0.0.1:`port`: its URL,
/// or a URL among a stdio server's arguments (`npx mcp-remote http://127.0.0.1:4747/mcp`), is
/// that Taskdeck's own MCP endpoint ([`super::import::is_taskdeck_url`]). As an upstream it
/// would serve Taskdeck's tools to Taskdeck, each call going through it twice, the second time
/// as whoever the upstream's token names: another principal's rules, tasks and audit entries.
/// `None` when it reaches something else.
pub fn own_endpoint(spec: &ServerSpec, port: u16) -> Option<String> {
    let ours = |url: &&String| super::import::is_taskdeck_url(url, Some(port));
    let url = match &spec.transport {
        Transport::Http { url, .. } => Some(url).filter(ours),
        Transport::Stdio { args, .. } => args.iter().find(ours),
    }?;
    Some(format!(
        "{url} is this Taskdeck's own MCP endpoint: as an upstream it would serve Taskdeck's \
         tools to itself, each call going through Taskdeck twice, the second time as the \
         principal of the upstream's token"
    ))
}

impl ServerSpec {
    /// Checks what a server needs to be started: a non-empty command; no NUL character in the
    /// command, its arguments, env values or cwd (a process cannot be given one); an
    /// `http`/`https` URL; header names and values HTTP allows; env names without `=` or NUL.
    /// Errors: [`ServersFileError::BadSpec`] (naming the place, never an env value).
    pub fn validate(&self) -> Result<(), ServersFileError> {
        let bad = |why: String| Err(ServersFileError::BadSpec(why));
        match &self.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                if command.trim().is_empty() {
                    return bad("the command is empty".into());
                }
                if command.contains('\0') {
                    return bad("the command holds a NUL character".into());
                }
                if let Some(n) = args.iter().position(|a| a.contains('\0')) {
                    return bad(format!("argument {} holds a NUL character", n + 1));
                }
                if let Some(key) = env.keys().find(|k| !crate::tools::process::is_env_name(k)) {
                    return bad(format!("bad environment variable name {key:?}"));
                }
                if let Some((key, _)) = env.iter().find(|(_, v)| v.contains('\0')) {
                    return bad(format!(
                        "the value of environment variable {key} holds a NUL character"
                    ));
                }
                if cwd
                    .as_ref()
                    .is_some_and(|d| d.as_os_str().as_encoded_bytes().contains(&0))
                {
                    return bad("the cwd holds a NUL character".into());
                }
            }
            Transport::Http { url, headers } => {
                match reqwest::Url::parse(url) {
                    Ok(u) if matches!(u.scheme(), "http" | "https") => {}
                    Ok(u) => {
                        return bad(format!(
                            "the URL's scheme is {:?}, not http or https",
                            u.scheme()
                        ));
                    }
                    Err(e) => return bad(format!("bad URL: {e}")),
                }
                // The URL's password is sent as `Authorization: Basic …`: a second
                // Authorization header would be sent with it.
                if reqwest::Url::parse(url).is_ok_and(|u| u.password().is_some())
                    && headers
                        .keys()
                        .any(|k| k.eq_ignore_ascii_case("authorization"))
                {
                    return bad(
                        "the URL has a password and `headers` has Authorization: give one".into(),
                    );
                }
                for (name, value) in headers {
                    if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                        return bad(format!("bad header name {name:?}"));
                    }
                    if http::HeaderValue::from_str(value).is_err() {
                        // The value is a secret: name only the header.
                        return bad(format!(
                            "the value of header {name:?} is not a valid header value"
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// One entry of the file as a spec, or why it is not one, naming the member at fault where
/// serde would not (its messages name no field inside an entry).
fn entry_spec(entry: &serde_json::Value) -> Result<ServerSpec, String> {
    let Some(members) = entry.as_object() else {
        return Err("the entry is not an object (it has a `command` or a `url`, and more)".into());
    };
    // The untagged transport would read an entry with both as stdio: say so instead of
    // guessing.
    if members.contains_key("command") && members.contains_key("url") {
        return Err("it has both `command` and `url`: give one".into());
    }
    if let Some(field) = members.keys().find(|k| !ENTRY_FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "unknown field `{field}` (an entry has {})",
            ENTRY_FIELDS.map(|f| format!("`{f}`")).join(", ")
        ));
    }
    if members.get("timeoutMs").is_some_and(|t| !t.is_u64()) {
        return Err("`timeoutMs` is a whole number of milliseconds".into());
    }
    if members.get("disabled").is_some_and(|d| !d.is_boolean()) {
        return Err("`disabled` is true or false".into());
    }
    serde_json::from_value::<ServerSpec>(entry.clone()).map_err(|e| {
        // The untagged transport says only that no variant fitted.
        let untagged = e.to_string().contains("untagged enum Transport");
        match (untagged, members.get("command"), members.get("url")) {
            (false, ..) => e.to_string(),
            (true, Some(_), _) => "a stdio entry has `command` (a string), `args` (a list of \
                strings), `env` (an object of strings) and `cwd` (a path)"
                .to_string(),
            (true, None, Some(_)) => {
                "an http entry has `url` (a string) and `headers` (an object of strings)"
                    .to_string()
            }
            (true, None, None) => {
                "it needs a `command` (a program to start) or a `url`".to_string()
            }
        }
    })
}

impl ServersConfig {
    /// Reads `path`. A missing file is no servers; a file that is not JSON, or whose `servers`
    /// is not an object of entries, is [`ServersFileError::Malformed`] (naming the file, the
    /// problem, its line and column); an entry that is not a spec is kept in
    /// [`ServersConfig::unreadable`] and the others are read.
    pub fn load(path: &Path) -> Result<ServersConfig, ServersFileError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ServersConfig::default());
            }
            Err(source) => {
                return Err(ServersFileError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let malformed = |problem: String| ServersFileError::Malformed {
            path: path.to_path_buf(),
            problem,
        };
        let file: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| malformed(e.to_string()))?;
        let entries = match file.get("servers") {
            _ if !file.is_object() => {
                return Err(malformed("the file is not a JSON object".into()));
            }
            None => return Ok(ServersConfig::default()),
            Some(serde_json::Value::Object(entries)) => entries,
            Some(_) => return Err(malformed("`servers` is not an object of entries".into())),
        };
        let mut config = ServersConfig::default();
        for (name, entry) in entries {
            let spec = entry_spec(entry);
            match spec {
                Ok(spec) => {
                    config.servers.insert(name.clone(), spec);
                }
                Err(problem) => {
                    let raw = entry.clone();
                    config
                        .unreadable
                        .insert(name.clone(), Unreadable { raw, problem });
                }
            }
        }
        Ok(config)
    }

    /// Writes the whole file to `path` as pretty JSON, mode 0600: to a temp file in the same
    /// directory (created if missing), then renamed over `path`, so a reader (or the watcher)
    /// sees the old file or the new one, never half of one.
    pub fn save(&self, path: &Path) -> Result<(), ServersFileError> {
        let write_err = |source| ServersFileError::Write {
            path: path.to_path_buf(),
            source,
        };
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(write_err)?;
        let mut file = serde_json::to_value(self).expect("servers serialize");
        for (name, entry) in &self.unreadable {
            if !self.servers.contains_key(name) {
                file["servers"][name] = entry.raw.clone();
            }
        }
        let mut text = serde_json::to_string_pretty(&file).expect("servers serialize");
        text.push('\n');
        // tempfile creates it 0600 on Unix: the secrets are never readable by others, not even
        // for the moment between write and rename.
        let mut tmp = tempfile::Builder::new()
            .prefix(".servers.json.")
            .tempfile_in(dir)
            .map_err(write_err)?;
        tmp.write_all(text.as_bytes()).map_err(write_err)?;
        tmp.as_file().sync_all().map_err(write_err)?;
        tmp.persist(path).map_err(|e| write_err(e.error))?;
        Ok(())
    }
}

/// Adds server `name` to the file at `path` (creating the file if missing). Errors: a bad name
/// or spec (the file is not touched), [`ServersFileError::Exists`] when the name is taken, and
/// the file's own errors.
pub fn add_server(path: &Path, name: &str, spec: ServerSpec) -> Result<(), ServersFileError> {
    validate_name(name)?;
    spec.validate()?;
    change(path, |config| {
        if config.has(name) {
            return Err(ServersFileError::Exists(name.to_string()));
        }
        config.servers.insert(name.to_string(), spec);
        Ok(())
    })
}

/// Removes server `name` (readable or not) from the file at `path`. Errors:
/// [`ServersFileError::Unknown`] when the file has no such entry, and the file's own errors.
pub fn remove_server(path: &Path, name: &str) -> Result<(), ServersFileError> {
    change(path, |config| {
        let removed = config.servers.remove(name).is_some();
        match removed || config.unreadable.remove(name).is_some() {
            true => Ok(()),
            false => Err(ServersFileError::Unknown(name.to_string())),
        }
    })
}

/// Loads, applies `edit` and saves, holding an exclusive lock on `<path>.lock` throughout, so
/// concurrent changes (the CLI, the API) apply one after the other. Nothing is written when
/// `edit` fails.
pub fn change(
    path: &Path,
    edit: impl FnOnce(&mut ServersConfig) -> Result<(), ServersFileError>,
) -> Result<(), ServersFileError> {
    let lock_path = path.with_extension("json.lock");
    if let Some(dir) = lock_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| ServersFileError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let lock_err = |source| ServersFileError::Write {
        path: lock_path.clone(),
        source,
    };
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(lock_err)?;
    lock.lock().map_err(lock_err)?;
    let mut config = ServersConfig::load(path)?;
    edit(&mut config)?;
    config.save(path)
    // The lock is released when `lock` is dropped.
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::os::unix::fs::PermissionsExt;

    fn stdio(command: &str) -> ServerSpec {
        ServerSpec {
            transport: Transport::Stdio {
                command: command.into(),
                args: vec![],
                env: BTreeMap::new(),
                cwd: None,
            },
            disabled: false,
            timeout_ms: None,
        }
    }

    fn http(url: &str, headers: &[(&str, &str)]) -> ServerSpec {
        ServerSpec {
            transport: Transport::Http {
                url: url.into(),
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            },
            disabled: false,
            timeout_ms: None,
        }
    }

    #[test]
    fn names_follow_the_rules() {
        for good in ["fs", "a", "my-server_2", &"x".repeat(64)] {
            validate_name(good).unwrap();
        }
        for bad in [
            "",
            "Fs",
            "a b",
            "a.b",
            "a__b",
            "co_",
            "taskdeck",
            "é",
            &"x".repeat(65),
            "a/b",
        ] {
            assert!(
                matches!(validate_name(bad), Err(ServersFileError::BadName(_))),
                "{bad:?}"
            );
        }
        assert!(
            validate_name("a__b")
                .unwrap_err()
                .to_string()
                .contains("'__'")
        );
    }

    #[test]
    fn a_missing_file_is_no_servers() {
        let dir = tempfile::tempdir().unwrap();
        let config = ServersConfig::load(&dir.path().join("servers.json")).unwrap();
        assert!(config.servers.is_empty());
    }

    #[test]
    fn a_malformed_file_names_the_file_and_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("servers.json");
        std::fs::write(&path, "{\"servers\": {").unwrap();
        let e = ServersConfig::load(&path).unwrap_err().to_string();
        assert!(e.contains(&path.display().to_string()), "{e}");
        assert!(e.contains("not a valid servers file"), "{e}");
        assert!(e.contains("EOF") && e.contains("line 1"), "{e}");
        std::fs::write(&path, "{\"servers\": [\"fs\"]}").unwrap();
        let e = ServersConfig::load(&path).unwrap_err().to_string();
        assert!(e.contains("`servers` is not an object"), "{e}");
    }

    /// An entry that is not a spec costs only itself: the others are read, it is kept with
    /// why, written back as it was when the file is edited, and can be removed.
    #[test]
    fn an_entry_that_is_not_a_spec_is_kept_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("servers.json");
        let both = json!({"command": "npx", "url": "http://x.example/mcp"});
        let file = json!({"servers": {"both": both, "typed": {"command": "npx", "args": "-y"},
            "none": {"args": []}, "fs": {"command": "npx"},
            "typo": {"url": "http://x.example/mcp", "header": {"Authorization": "x"}},
            "number": 42, "slow": {"command": "npx", "timeoutMs": "5"},
            "off": {"command": "npx", "disabled": "yes"}}});
        std::fs::write(&path, file.to_string()).unwrap();
        let config = ServersConfig::load(&path).unwrap();
        assert_eq!(config.servers.keys().collect::<Vec<_>>(), ["fs"]);
        let problem = |name: &str| config.unreadable[name].problem.clone();
        assert!(
            problem("both").contains("both `command` and `url`"),
            "{}",
            problem("both")
        );
        assert!(
            problem("typed").contains("`args` (a list of strings)"),
            "{}",
            problem("typed")
        );
        assert!(
            problem("none").contains("needs a `command`"),
            "{}",
            problem("none")
        );
        assert!(
            problem("typo").starts_with("unknown field `header` (an entry has `command`,"),
            "{}",
            problem("typo")
        );
        assert!(problem("number").starts_with("the entry is not an object"));
        assert_eq!(
            problem("slow"),
            "`timeoutMs` is a whole number of milliseconds"
        );
        assert_eq!(problem("off"), "`disabled` is true or false");
        assert!(config.has("both") && !config.has("other"));
        // Edited through the CLI's functions: the unreadable entries stay as written.
        add_server(&path, "docs", http("https://x.example/mcp", &[])).unwrap();
        assert!(matches!(
            add_server(&path, "both", stdio("x")),
            Err(ServersFileError::Exists(_))
        ));
        let text: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(text["servers"]["both"], both);
        remove_server(&path, "both").unwrap();
        let config = ServersConfig::load(&path).unwrap();
        assert_eq!(
            config.unreadable.keys().collect::<Vec<_>>(),
            ["none", "number", "off", "slow", "typed", "typo"]
        );
        assert_eq!(config.servers.keys().collect::<Vec<_>>(), ["docs", "fs"]);
    }

    #[test]
    fn save_writes_pretty_json_readable_only_by_the_owner() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cfg/servers.json");
        let mut config = ServersConfig::default();
        config.servers.insert(
            "docs".into(),
            http(
                "https://x.example/mcp",
                &[("Authorization", "Bearer s3cret")],
            ),
        );
        config.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\n  \"servers\": {\n"), "{text}");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(ServersConfig::load(&path).unwrap(), config);
        // No temp file is left behind.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("servers.json")]);
    }

    #[test]
    fn add_and_remove_edit_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("servers.json");
        add_server(&path, "fs", stdio("npx")).unwrap();
        add_server(&path, "docs", http("https://x.example/mcp", &[])).unwrap();
        assert!(matches!(
            add_server(&path, "fs", stdio("other")),
            Err(ServersFileError::Exists(_))
        ));
        assert!(matches!(
            add_server(&path, "Bad", stdio("x")),
            Err(ServersFileError::BadName(_))
        ));
        let config = ServersConfig::load(&path).unwrap();
        assert_eq!(config.servers.len(), 2);
        assert_eq!(config.servers["fs"], stdio("npx"));
        remove_server(&path, "fs").unwrap();
        assert!(matches!(
            remove_server(&path, "fs"),
            Err(ServersFileError::Unknown(_))
        ));
        let config = ServersConfig::load(&path).unwrap();
        assert_eq!(config.servers.keys().collect::<Vec<_>>(), ["docs"]);
    }

    #[test]
    fn concurrent_adds_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("servers.json");
        std::thread::scope(|s| {
            for i in 0..8 {
                let path = &path;
                s.spawn(move || add_server(path, &format!("s{i}"), stdio("x")).unwrap());
            }
        });
        assert_eq!(ServersConfig::load(&path).unwrap().servers.len(), 8);
    }

    #[test]
    fn specs_that_cannot_start_are_refused() {
        let bad = |spec: ServerSpec| matches!(spec.validate(), Err(ServersFileError::BadSpec(_)));
        assert!(bad(stdio("  ")));
        assert!(bad(http("ftp://x.example/", &[])));
        assert!(bad(http("not a url", &[])));
        assert!(bad(http("https://x.example/", &[("Bad Name", "v")])));
        let e = http(
            "https://x.example/",
            &[("Authorization", "Bearer s3cret\n")],
        )
        .validate()
        .unwrap_err()
        .to_string();
        assert!(!e.contains("s3cret"), "{e}");
        let mut env = stdio("x");
        if let Transport::Stdio { env, .. } = &mut env.transport {
            env.insert("A=B".into(), "v".into());
        }
        assert!(bad(env));
        assert!(bad(stdio("np\0x")));
        let mut arg = stdio("npx");
        if let Transport::Stdio { args, .. } = &mut arg.transport {
            args.extend(["-y".into(), "a\0b".into()]);
        }
        assert_eq!(
            arg.validate().unwrap_err().to_string(),
            "argument 2 holds a NUL character"
        );
        let mut value = stdio("npx");
        if let Transport::Stdio { env, .. } = &mut value.transport {
            env.insert("KEY".into(), "s3cret\0".into());
        }
        let e = value.validate().unwrap_err().to_string();
        assert!(e.contains("KEY") && !e.contains("s3cret"), "{e}");
        assert!(bad(http(
            "https://u:pw@x.example/",
            &[("authorization", "Bearer t")]
        )));
        stdio("npx").validate().unwrap();
        http("http://127.0.0.1:3000/mcp", &[("X-Key", "v")])
            .validate()
            .unwrap();
    }
}

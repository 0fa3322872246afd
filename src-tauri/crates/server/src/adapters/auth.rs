//! Bearer tokens for named principals: making secrets, the admin token file, and resolving a
//! request's token to its principal and [`Role`] (`agent` or `human` as stored with the token;
//! the token named [`ADMIN`] is the admin's). A token is `td_` + 32 random bytes (base64url); only its
//! SHA-256 (hex) is kept, in the store's `tokens` table ([`Store::add_token`] and its
//! neighbours). The admin token is created on first start and written to
//! `<config dir>/admin-token` with mode 0600.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::RwLock,
};

use base64::Engine as _;
use rand::RngCore;
use sha2::{Digest, Sha256};

use super::api_types::RoleName;
use taskdeck_engine::{EngineError, Principal, Role, clock::now_ms, store::Store};

/// Name of the admin principal (sees every task).
pub const ADMIN: &str = "admin";
/// Name of the principal of unauthenticated requests under `--allow-anonymous`.
pub const ANONYMOUS: &str = "anonymous";

/// Errors of token management.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The name (given) has a live token already; a revoked one's name may be reused.
    #[error("a token named {0:?} already exists (revoke it first)")]
    Exists(String),
    /// A name that only differs in case from a principal's that exists (live or revoked):
    /// the two would read the same in lists, the UI and the audit log.
    #[error(
        "{0:?} differs from the principal {1:?} only in case; use that one, or choose another name"
    )]
    CaseOf(String, String),
    /// No token, live or revoked, has this name (given).
    #[error("no token named {0:?}")]
    Unknown(String),
    /// A revocation of a token revoked before: nothing changed.
    #[error("the token {0:?} was already revoked")]
    AlreadyRevoked(String),
    /// Revoking the admin token would lock the human out of a running Taskdeck.
    #[error(
        "the admin token cannot be revoked; to replace it, delete the admin-token file in the config dir and restart Taskdeck"
    )]
    AdminRevoke,
    /// The name (given) is not 1-64 ASCII letters, digits, `-`, `_` and `.`.
    #[error("token names are 1-64 characters of letters, digits, '-', '_' and '.'; {0:?} is not")]
    BadName(String),
    /// `admin` (its token is in the admin-token file) and `anonymous` (requests without a
    /// token under `--allow-anonymous`) name Taskdeck's own principals, in any case.
    #[error("the name {name:?} is reserved: {why}; choose another name", name = .0, why = reserved_for(.0))]
    Reserved(String),
    /// A token was asked for with the admin's role: there is one admin token.
    #[error(
        "there is one admin token (in the admin-token file in the config dir); give a person the role \"human\" instead"
    )]
    AdminRole,
    /// The admin-token file holds a token too weak to guard everything (too short, or with a
    /// space or control character in it): a hand-edited or cut file.
    #[error(
        "the admin-token file {0} holds no usable token ({1}); delete it and Taskdeck makes a new one at its next start, or write a random token of at least {MIN_ADMIN_TOKEN_CHARS} characters into it"
    )]
    WeakAdminToken(String, String),
    /// The store's error; its text says it is the store's ("store: ...", or the full disk's).
    #[error("{0}")]
    Store(#[from] EngineError),
    /// A file (the admin-token file) or the runtime of [`TokenCommands`] could not be set up.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// One token as listed (never the secret).
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    /// The token's name: the name of the principal it stands for.
    pub name: String,
    /// `admin` (the admin token), `human` or `agent`.
    pub role: RoleName,
    /// When the token was created, ISO 8601 UTC with milliseconds.
    pub created_at: String,
    /// The token was revoked: requests with it get 401.
    pub revoked: bool,
}

/// The principal a token stands for: the token named [`ADMIN`] is the admin's whatever its row
/// says; any other token has the role stored with it (`agent` or `human`).
fn principal_of(name: String, stored: Role) -> Principal {
    if name == ADMIN {
        Principal::admin()
    } else {
        Principal { name, role: stored }
    }
}

/// What the store keeps of a token: its SHA-256, hex.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// What reserved name `name` stands for, for [`AuthError::Reserved`].
fn reserved_for(name: &str) -> &'static str {
    if name.eq_ignore_ascii_case("admin") {
        "it is the admin's (the admin token is in the admin-token file in the config dir)"
    } else {
        "it names requests made without a token (under --allow-anonymous)"
    }
}

fn hash(token: &str) -> String {
    token_hash(token)
}

fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!(
        "td_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// The name's own rules for a new token of principal `name`: 1-64 ASCII letters, digits, `-`,
/// `_` or `.`, and not `admin` or `anonymous` in any case. Errors: [`AuthError::BadName`],
/// [`AuthError::Reserved`].
pub fn check_name(name: &str) -> Result<(), AuthError> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !valid {
        return Err(AuthError::BadName(name.into()));
    }
    if name.eq_ignore_ascii_case(ADMIN) || name.eq_ignore_ascii_case(ANONYMOUS) {
        return Err(AuthError::Reserved(name.into()));
    }
    Ok(())
}

/// Everything [`create_token_with_role`] checks before it writes, without writing: whether a
/// token for principal `name` with `role` can be made in `store` now. Errors: as
/// [`create_token_with_role`]'s.
pub fn check_new_token(store: &Store, name: &str, role: Role) -> Result<(), AuthError> {
    check_name(name)?;
    if role == Role::Admin {
        return Err(AuthError::AdminRole);
    }
    let tokens = store.tokens()?;
    if let Some(other) = tokens
        .iter()
        .find(|t| t.name != name && t.name.eq_ignore_ascii_case(name))
    {
        return Err(AuthError::CaseOf(name.into(), other.name.clone()));
    }
    if tokens.iter().any(|t| t.name == name && !t.revoked) {
        return Err(AuthError::Exists(name.into()));
    }
    Ok(())
}

/// Creates a token for principal `name` with `role` (`Agent` or `Human`) in `store` and returns
/// the secret (shown once; only its hash is kept). Errors: [`AuthError::Exists`],
/// [`AuthError::CaseOf`],
/// [`AuthError::BadName`], [`AuthError::Reserved`] for `admin` and `anonymous`,
/// [`AuthError::AdminRole`] for `Role::Admin`, [`AuthError::Store`].
pub async fn create_token_with_role(
    store: &Store,
    name: &str,
    role: Role,
) -> Result<String, AuthError> {
    check_new_token(store, name, role)?;
    let secret = new_secret();
    // Made between the check and here by another process: the insert says so.
    if store.add_token(name, &hash(&secret), role).await? {
        Ok(secret)
    } else {
        Err(AuthError::Exists(name.into()))
    }
}

/// [`create_token_with_role`] for an agent: the token of a program (an MCP client, a script).
pub async fn create_token(store: &Store, name: &str) -> Result<String, AuthError> {
    create_token_with_role(store, name, Role::Agent).await
}

/// Lists tokens (names, roles and dates, never secrets). Errors: [`AuthError::Store`].
pub fn list_tokens(store: &Store) -> Result<Vec<TokenInfo>, AuthError> {
    Ok(store
        .tokens()?
        .into_iter()
        .map(|t| TokenInfo {
            role: principal_of(t.name.clone(), t.role).role.into(),
            name: t.name,
            created_at: taskdeck_engine::clock::iso8601(t.created_at_ms),
            revoked: t.revoked,
        })
        .collect())
}

/// Revokes principal `name`'s token; requests with it get 401 from then on.
/// Errors: [`AuthError::Unknown`]; [`AuthError::AlreadyRevoked`] for a token revoked before;
/// [`AuthError::AdminRevoke`] for the admin token;
/// [`AuthError::Store`].
pub async fn revoke_token(store: &Store, name: &str) -> Result<(), AuthError> {
    if name == ADMIN {
        return Err(AuthError::AdminRevoke);
    }
    if store.revoke_token(name).await? {
        return Ok(());
    }
    let revoked_before = store.tokens()?.iter().any(|t| t.name == name && t.revoked);
    Err(match revoked_before {
        true => AuthError::AlreadyRevoked(name.into()),
        false => AuthError::Unknown(name.into()),
    })
}

/// Token management from a command-line process (`taskdeck token ...`, `taskdeck mcp-config`):
/// the store of a data dir, opened without its search index next to a server that may be
/// running on it, and a runtime to wait for its writes on. The server sees the changes at its
/// next read of the table (within [`Authenticator::RECHECK_MS`] for a revocation).
pub struct TokenCommands {
    store: Store,
    runtime: tokio::runtime::Runtime,
}

impl TokenCommands {
    /// Opens the store in `data_dir` (creating it if needed). Errors: [`AuthError::Store`],
    /// [`AuthError::Io`] when no runtime can be started.
    pub fn open(data_dir: &Path) -> Result<TokenCommands, AuthError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(TokenCommands {
            store: Store::open_for_tokens(data_dir)?,
            runtime,
        })
    }

    /// [`create_token`]: an agent's token.
    pub fn create(&self, name: &str) -> Result<String, AuthError> {
        self.runtime.block_on(create_token(&self.store, name))
    }

    /// [`check_new_token`] for an agent's token: whether [`TokenCommands::create`] of `name`
    /// would succeed now.
    pub fn check_create(&self, name: &str) -> Result<(), AuthError> {
        check_new_token(&self.store, name, Role::Agent)
    }

    /// [`create_token_with_role`].
    pub fn create_with_role(&self, name: &str, role: Role) -> Result<String, AuthError> {
        self.runtime
            .block_on(create_token_with_role(&self.store, name, role))
    }

    /// [`list_tokens`].
    pub fn list(&self) -> Result<Vec<TokenInfo>, AuthError> {
        list_tokens(&self.store)
    }

    /// True when `token` is one of the store's and not revoked. Errors: [`AuthError::Store`].
    pub fn is_live(&self, token: &str) -> Result<bool, AuthError> {
        Ok(self.live_role(token)?.is_some())
    }

    /// The role of `token` when it is one of the store's and not revoked. Errors:
    /// [`AuthError::Store`].
    pub fn live_role(&self, token: &str) -> Result<Option<Role>, AuthError> {
        Ok(self.store.live_token(&hash(token))?.map(|(_, role)| role))
    }

    /// The principal of `token` when it is one of the store's and not revoked. Errors:
    /// [`AuthError::Store`].
    pub fn live_principal(&self, token: &str) -> Result<Option<String>, AuthError> {
        Ok(self.store.live_token(&hash(token))?.map(|(name, _)| name))
    }

    /// True when `token` is this store's live admin token (the one `<config dir>/admin-token`
    /// of the Taskdeck using it holds). Errors: [`AuthError::Store`].
    pub fn is_admin(&self, token: &str) -> Result<bool, AuthError> {
        Ok(self.store.live_token_hash(ADMIN)?.as_deref() == Some(hash(token).as_str()))
    }

    /// [`revoke_token`].
    pub fn revoke(&self, name: &str) -> Result<(), AuthError> {
        self.runtime.block_on(revoke_token(&self.store, name))
    }
}

/// Path of the admin token file in `config_dir`.
pub fn admin_token_path(config_dir: &Path) -> PathBuf {
    config_dir.join("admin-token")
}

/// The admin token as stored in `<config dir>/admin-token` (trimmed), or `None` when the file
/// cannot be read. Command-line tools use it when given no `--token`.
pub fn read_admin_token(config_dir: &Path) -> Option<String> {
    std::fs::read_to_string(admin_token_path(config_dir))
        .ok()
        .map(|t| t.trim().to_string())
}

/// Makes sure `store` has an admin token whose secret is in
/// `<config_dir>/admin-token` (0600), and returns the file's path. The file is the source: a
/// store whose admin token differs (another data dir sharing this config dir, a restored
/// backup) takes the file's token, so one config dir never has two admin tokens replacing each
/// other. Only a missing or empty file gets a new secret (and the store's old admin token goes).
/// Errors: [`AuthError::Store`], [`AuthError::Io`] when the file cannot be written.
pub async fn ensure_admin_token(store: &Store, config_dir: &Path) -> Result<PathBuf, AuthError> {
    let path = admin_token_path(config_dir);
    let stored = store.live_token_hash(ADMIN)?;
    let existing = std::fs::read_to_string(&path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    if let Some(secret) = &existing
        && stored.as_deref() == Some(hash(secret).as_str())
    {
        return Ok(path);
    }
    if let Some(given) = &existing
        && let Some(why) = weak_token(given)
    {
        return Err(AuthError::WeakAdminToken(path.display().to_string(), why));
    }
    let secret = existing.clone().unwrap_or_else(new_secret);
    store.set_token(ADMIN, &hash(&secret)).await?;
    if existing.is_none() {
        std::fs::create_dir_all(config_dir)?;
        write_private(&path, &secret)?;
    }
    Ok(path)
}

/// The fewest characters a token written into the admin-token file by hand must have (those
/// Taskdeck makes have 46: `td_` and 43 of base64).
pub const MIN_ADMIN_TOKEN_CHARS: usize = 32;

/// Why `token`, read from the admin-token file, is too weak to be the admin's: shorter than
/// [`MIN_ADMIN_TOKEN_CHARS`], or holding a space or a control character; `None` when it will do.
pub fn weak_token(token: &str) -> Option<String> {
    let chars = token.chars().count();
    if chars < MIN_ADMIN_TOKEN_CHARS {
        return Some(format!("{chars} characters"));
    }
    token
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
        .then(|| "a space or a control character in it".to_string())
}

/// Writes `contents` and a newline to `path`, readable by its owner only (mode 0600, also for a
/// file that was there with another mode). Errors: the file cannot be opened or written.
pub fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    opts.mode(0o600);
    let mut f = opts.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    f.write_all(contents.as_bytes())?;
    f.write_all(b"\n")
}

/// Resolves bearer tokens to principals. Unknown hashes are looked up in the store, so a
/// token made by `taskdeck token create` while the server runs works at once; a known hash is
/// trusted for [`Authenticator::RECHECK_MS`] before the store is asked again, so a revoked
/// token stops working within that time.
pub struct Authenticator {
    store: Store,
    cache: RwLock<HashMap<String, (Principal, i64)>>,
}

impl Authenticator {
    /// How long a cached token is trusted before the database is asked again, in ms.
    pub const RECHECK_MS: i64 = 2_000;

    /// An authenticator over the tokens of `store`.
    pub fn new(store: Store) -> Authenticator {
        Authenticator {
            store,
            cache: RwLock::new(HashMap::new()),
        }
    }

    /// The principal owning `token`, or `None` (unknown or revoked).
    pub fn authenticate(&self, token: &str) -> Option<Principal> {
        let h = hash(token);
        let now = now_ms();
        if let Some((p, at)) = self.cache.read().unwrap().get(&h)
            && now - at < Self::RECHECK_MS
        {
            return Some(p.clone());
        }
        let live = self.live(&h).ok()?;
        let mut cache = self.cache.write().unwrap();
        match live {
            Some((name, role)) => {
                let p = principal_of(name, role);
                cache.insert(h, (p.clone(), now));
                Some(p)
            }
            None => {
                cache.remove(&h);
                None
            }
        }
    }

    /// Asks the store (never the cache) whether `token` was revoked or deleted since it
    /// authenticated a request. `false` when the store cannot be read: an open event stream
    /// is not cut because of a busy or briefly unreadable file.
    pub fn is_revoked(&self, token: &str) -> bool {
        let h = hash(token);
        match self.live(&h) {
            Ok(Some(_)) => false,
            Ok(None) => {
                self.cache.write().unwrap().remove(&h);
                true
            }
            Err(_) => false,
        }
    }

    /// The principal name and stored role of the live (not revoked) token with hash `h`.
    fn live(&self, h: &str) -> Result<Option<(String, Role)>, AuthError> {
        Ok(self.store.live_token(h)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use taskdeck_engine::{feed::ChangeFeed, store::Durability};

    fn store(dir: &Path) -> Store {
        Store::open(dir, Durability::Process, ChangeFeed::new(8)).unwrap()
    }

    /// `Agent1` beside `agent1` would be another principal that reads the same: refused,
    /// naming the one that exists (revoked or not).
    #[tokio::test]
    async fn a_name_differing_only_in_case_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        create_token(&s, "agent1").await.unwrap();
        let e = create_token(&s, "Agent1").await.unwrap_err();
        assert!(
            matches!(&e, AuthError::CaseOf(n, o) if n == "Agent1" && o == "agent1"),
            "{e:?}"
        );
        assert!(e.to_string().contains("only in case"), "{e}");
        revoke_token(&s, "agent1").await.unwrap();
        assert!(matches!(
            create_token_with_role(&s, "AGENT1", Role::Human).await,
            Err(AuthError::CaseOf(..))
        ));
        // The same name after its revocation is a new token for the same principal.
        create_token(&s, "agent1").await.unwrap();
        assert!(s.tokens().unwrap().iter().all(|t| t.name == "agent1"));
    }

    #[tokio::test]
    async fn stores_sharing_a_config_dir_share_its_admin_token() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("cfg");
        let (a, b) = (store(&dir.path().join("a")), store(&dir.path().join("b")));
        let file = ensure_admin_token(&a, &cfg).await.unwrap();
        let token = std::fs::read_to_string(&file).unwrap().trim().to_string();
        ensure_admin_token(&b, &cfg).await.unwrap();
        ensure_admin_token(&a, &cfg).await.unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap().trim(),
            token,
            "never rewritten"
        );
        for s in [&a, &b] {
            assert_eq!(
                Authenticator::new(s.clone()).authenticate(&token),
                Some(Principal::admin())
            );
        }
        // A lost file: a new token, and the old one stops working.
        std::fs::remove_file(&file).unwrap();
        ensure_admin_token(&a, &cfg).await.unwrap();
        let fresh = std::fs::read_to_string(&file).unwrap().trim().to_string();
        assert_ne!(fresh, token);
        assert_eq!(Authenticator::new(a.clone()).authenticate(&token), None);
        // A file cut short or edited into a guessable word is refused, not made the admin's.
        for weak in ["garbage", "td_short", &format!("{} x", "y".repeat(40))] {
            std::fs::write(&file, format!("{weak}\n")).unwrap();
            let e = ensure_admin_token(&a, &cfg).await.unwrap_err().to_string();
            assert!(
                e.contains("holds no usable token") && e.contains("delete it"),
                "{e}"
            );
            assert_eq!(Authenticator::new(a.clone()).authenticate(weak), None);
        }
        // A long random token written by hand is taken.
        let own = "my-own-admin-token-0123456789abcdefXYZ";
        std::fs::write(&file, own).unwrap();
        ensure_admin_token(&a, &cfg).await.unwrap();
        assert_eq!(
            Authenticator::new(a.clone()).authenticate(own),
            Some(Principal::admin())
        );
    }

    /// A token made by a command-line process is known to a running server's store at once,
    /// and its revocation reaches the server's authenticator.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn tokens_made_by_another_process_reach_the_server() {
        let dir = tempfile::tempdir().unwrap();
        let server = store(dir.path());
        let auth = Authenticator::new(server.clone());
        let cli = tokio::task::spawn_blocking({
            let dir = dir.path().to_path_buf();
            move || {
                let cli = TokenCommands::open(&dir).unwrap();
                let secret = cli.create("agent-1").unwrap();
                assert!(matches!(
                    cli.create_with_role("agent-1", Role::Human),
                    Err(AuthError::Exists(_))
                ));
                (cli, secret)
            }
        });
        let (cli, secret) = cli.await.unwrap();
        assert_eq!(
            auth.authenticate(&secret),
            Some(Principal::named("agent-1"))
        );
        let listed = list_tokens(&server).unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].name == "agent-1" && !listed[0].revoked);
        // (A runtime is dropped outside async code: `cli` ends in the blocking task.)
        tokio::task::spawn_blocking(move || {
            cli.revoke("agent-1").unwrap();
            assert!(matches!(
                cli.revoke("agent-1"),
                Err(AuthError::AlreadyRevoked(_))
            ));
            assert!(matches!(cli.revoke("agent-9"), Err(AuthError::Unknown(_))));
            assert!(matches!(cli.revoke(ADMIN), Err(AuthError::AdminRevoke)));
        })
        .await
        .unwrap();
        assert!(auth.is_revoked(&secret));
        assert_eq!(auth.authenticate(&secret), None);
        // A revoked name may be given a new token.
        let again = create_token(&server, "agent-1").await.unwrap();
        assert_eq!(auth.authenticate(&again), Some(Principal::named("agent-1")));
    }

    /// A human token authenticates as a human and is listed as one; the admin token is listed
    /// as the admin's; no second admin can be made.
    #[tokio::test]
    async fn roles_are_stored_with_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(&dir.path().join("data"));
        ensure_admin_token(&s, &dir.path().join("cfg"))
            .await
            .unwrap();
        let alice = create_token_with_role(&s, "alice", Role::Human)
            .await
            .unwrap();
        let bot = create_token(&s, "bot").await.unwrap();
        let auth = Authenticator::new(s.clone());
        assert_eq!(auth.authenticate(&alice), Some(Principal::human("alice")));
        assert_eq!(auth.authenticate(&bot), Some(Principal::named("bot")));
        assert!(matches!(
            create_token_with_role(&s, "root", Role::Admin).await,
            Err(AuthError::AdminRole)
        ));
        let roles: Vec<(String, RoleName)> = list_tokens(&s)
            .unwrap()
            .into_iter()
            .map(|t| (t.name, t.role))
            .collect();
        assert_eq!(
            roles,
            [
                ("admin".into(), RoleName::Admin),
                ("alice".into(), RoleName::Human),
                ("bot".into(), RoleName::Agent)
            ]
        );
    }
}

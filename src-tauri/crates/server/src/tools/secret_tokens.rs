//! Credentials known by their shape: the prefixes services give the tokens they issue
//! (`ghp_…` GitHub, `glpat-…` GitLab, `xoxb-…` Slack, `sk-ant-…`, `npm_…`, ...), so a token is
//! found where no name says what it is: `https://ghp_…@github.com/org/repo.git`, `echo
//! glpat-… | docker login --password-stdin`, a bare argument; and the bodies of PEM private
//! keys (`-----BEGIN OPENSSH PRIVATE KEY-----` …) in data, say a file an agent writes (never in
//! a shell line: [`super::secrets`] decides where).
//! [`super::secrets`] masks them with the credentials it finds by name.

/// The prefixes of issued tokens, each with the fewest characters a token has after it (so
/// that `npm_config` or `hf_hub` in prose is no token).
const PREFIXES: &[(&str, usize)] = &[
    ("github_pat_", 22),
    ("ghp_", 30),
    ("gho_", 30),
    ("ghu_", 30),
    ("ghs_", 30),
    ("ghr_", 30),
    ("glpat-", 20),
    ("gldt-", 20),
    ("xoxb-", 20),
    ("xoxp-", 20),
    ("xoxa-", 20),
    ("xoxe-", 20),
    ("xapp-", 20),
    // Anthropic keys are ~100 characters; a test key or a cut one is shorter, and `sk-ant-`
    // names nothing else.
    ("sk-ant-", 20),
    ("sk-proj-", 30),
    ("sk_live_", 20),
    ("rk_live_", 20),
    ("npm_", 30),
    ("pypi-", 50),
    ("hf_", 30),
    ("dop_v1_", 40),
    ("shpat_", 30),
    ("AIza", 35),
    // AWS access key ids (long-lived, and temporary).
    ("AKIA", 16),
    ("ASIA", 16),
    // Taskdeck's own: 32 random bytes, URL-safe base64 (`adapters::auth`).
    ("td_", 43),
];

/// `value` with every token of a known shape in it replaced by `with`, `None` when it holds
/// none. A token starts a word (after anything but a letter, digit, `_` or `-`) and runs over
/// letters, digits, `_` and `-`. A file's name is no token: one in a path (after a `/` of a
/// word that is no URL) is the name of what may run (`./ghp_…`, `/tmp/x/ghp_… --force`) and
/// is shown, while a URL's (`https://ghp_…@github.com`, `https://h/hooks/glpat-…`) is masked.
pub(super) fn mask_tokens(value: &str, with: &str) -> Option<String> {
    mask_prefixed(value, with, PREFIXES)
}

/// Taskdeck's own tokens (`td_…`, [`PREFIXES`]) in `value` replaced by `[redacted]`, as
/// [`mask_tokens`] finds them; `None` when it holds none. Whatever an upstream answers an agent
/// (a file it read, a resource) goes through this: a token of Taskdeck's would let the agent
/// act as whoever holds it, a person deciding its own calls included.
pub(super) fn mask_taskdeck_tokens(value: &str) -> Option<String> {
    if !value.contains("td_") {
        return None;
    }
    mask_prefixed(value, super::secrets::REDACTED, &[("td_", 43)])
}

/// [`mask_tokens`] for the tokens of `prefixes`.
fn mask_prefixed(value: &str, with: &str, prefixes: &[(&str, usize)]) -> Option<String> {
    let is_token_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    // Whether the word being read (since the last whitespace, quote, `=` or `(`) holds a
    // `://` so far: a URL, whose path may hold a token, where another word's `/…` is a path
    // to a file. Kept as the text is read, so that the text is read once.
    let mut url_word = false;
    while at < value.len() {
        let rest = &value[at..];
        let before = value[..at].chars().next_back();
        let starts_word = before.is_none_or(|c| !is_token_char(c));
        let in_a_path = before == Some('/') && !url_word;
        if starts_word
            && !in_a_path
            && let Some((p, min)) = prefixes.iter().find(|(p, _)| rest.starts_with(p))
        {
            // (A token's characters end no word and start no `://`: skipping them keeps
            // `url_word` right.)
            let len = rest.find(|c| !is_token_char(c)).unwrap_or(rest.len());
            if len >= p.len() + min {
                out.push_str(&value[copied..at]);
                out.push_str(with);
                copied = at + len;
                at += len;
                continue;
            }
        }
        let c = rest.chars().next().unwrap_or_default();
        if c.is_whitespace() || matches!(c, '\'' | '"' | '=' | '(') {
            url_word = false;
        } else if rest.starts_with("://") {
            url_word = true;
        }
        at += c.len_utf8().max(1);
    }
    (copied > 0).then(|| {
        out.push_str(&value[copied..]);
        out
    })
}

/// `value` with the body of every PEM private key in it (between `-----BEGIN … PRIVATE
/// KEY-----` and its `-----END … PRIVATE KEY-----`) replaced by `with`, the two lines kept;
/// `None` when it holds none. A body is masked only when it is what a key's body is (lines of
/// base64, and the `Name: value` headers of an encrypted key; the line breaks may be written
/// `\n`, as in JSON text), so a mask never hides a command written between two such lines.
pub(super) fn mask_private_keys(value: &str, with: &str) -> Option<String> {
    const BEGIN: &str = "-----BEGIN ";
    const DASHES: &str = "-----";
    // A label is a few words on the BEGIN line (`OPENSSH PRIVATE KEY`): looked for that far.
    const LABEL_MAX: usize = 64;
    let mut out = String::new();
    let mut copied = 0;
    let mut from = 0;
    // For each label, where its next END line starts, as last looked for (`None`: none after
    // that point): a text of many BEGIN lines and one END, or none, is read once.
    let mut ends: std::collections::HashMap<&str, Option<usize>> = Default::default();
    while let Some(found) = value[from..].find(BEGIN) {
        let label_at = from + found + BEGIN.len();
        from = label_at;
        let rest = &value[label_at..];
        let mut cut = rest.len().min(LABEL_MAX + DASHES.len());
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let window = &rest[..cut];
        let window = window.split(['\n', '\\']).next().unwrap_or_default();
        let Some(label_len) = window.find(DASHES) else {
            continue;
        };
        let label = &value[label_at..label_at + label_len];
        let body_at = label_at + label_len + DASHES.len();
        from = body_at;
        if !label.ends_with("PRIVATE KEY") {
            continue;
        }
        let end = format!("-----END {label}-----");
        let end_at = match ends.get(label) {
            Some(Some(at)) if *at >= body_at => Some(*at),
            Some(None) => None,
            _ => {
                let at = value[body_at..].find(&end).map(|i| body_at + i);
                ends.insert(label, at);
                at
            }
        };
        let Some(end_at) = end_at else {
            continue;
        };
        // A body that holds another BEGIN line is no key's: that BEGIN is read next.
        if value[body_at..end_at].contains(BEGIN) {
            continue;
        }
        if key_body(&value[body_at..end_at]) {
            out.push_str(&value[copied..body_at]);
            out.push_str(with);
            copied = end_at;
        }
        from = end_at + end.len();
    }
    (copied > 0).then(|| {
        out.push_str(&value[copied..]);
        out
    })
}

/// True when `body` reads as a PEM key's: at least one line of base64, every other line empty
/// or an encrypted key's header (`Proc-Type: 4,ENCRYPTED`, `DEK-Info: AES-128-CBC,…`).
fn key_body(body: &str) -> bool {
    let mut base64 = false;
    for line in body.replace("\\r", "").replace("\\n", "\n").lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='))
        {
            base64 = true;
            continue;
        }
        let header = line.split_once(": ").is_some_and(|(name, v)| {
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, ',' | '-' | ' '))
        });
        if !header {
            return false;
        }
    }
    base64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_key_bodies_are_masked_and_nothing_else() {
        let key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\nAAAAC3NzaC1lZDI1NTE5\n-----END OPENSSH PRIVATE KEY-----";
        assert_eq!(
            mask_private_keys(&format!("KEY={key}\nok"), "*").as_deref(),
            Some("KEY=-----BEGIN OPENSSH PRIVATE KEY-----*-----END OPENSSH PRIVATE KEY-----\nok")
        );
        // As JSON text writes it.
        let escaped = key.replace('\n', "\\n");
        assert_eq!(
            mask_private_keys(&escaped, "*").as_deref(),
            Some("-----BEGIN OPENSSH PRIVATE KEY-----*-----END OPENSSH PRIVATE KEY-----")
        );
        let encrypted = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,AB12\n\nMIIEow==\n-----END RSA PRIVATE KEY-----";
        assert!(mask_private_keys(encrypted, "*").is_some());
        for kept in [
            // A public key, a certificate: not secrets.
            "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
            // A command between the lines is never hidden.
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n; rm -rf ~\n-----END RSA PRIVATE KEY-----",
            // No end: nothing is known to be a key.
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE",
        ] {
            assert_eq!(mask_private_keys(kept, "*"), None, "{kept}");
        }
    }

    #[test]
    fn tokens_are_known_by_their_prefixes() {
        let ghp = format!("ghp_{}", "a1B2".repeat(9));
        let shown = mask_tokens(
            &format!("git clone https://{ghp}@github.com/o/r.git && echo {ghp}"),
            "****",
        );
        assert_eq!(
            shown.as_deref(),
            Some("git clone https://****@github.com/o/r.git && echo ****")
        );
        let td = format!("td_{}", "Zm9v_-x".repeat(6) + "y");
        assert_eq!(
            mask_tokens(&format!("echo {td}"), "*").as_deref(),
            Some("echo *")
        );
        let glpat = format!("glpat-{}", "x".repeat(20));
        assert_eq!(
            mask_tokens(&format!("TOKEN:{glpat}."), "*").as_deref(),
            Some("TOKEN:*.")
        );
        assert_eq!(
            mask_tokens("aws_id=AKIAIOSFODNN7EXAMPLE", "*").as_deref(),
            Some("aws_id=*")
        );
        assert_eq!(
            mask_tokens("key sk-ant-api03-SECRETSECRETSECRET", "*").as_deref(),
            Some("key *")
        );
        // A file's name is what may run: shown. A URL's path is not a file's.
        for (given, shown) in [
            (format!("ls /tmp/x && ./{ghp}"), None),
            (format!("ls && /tmp/x/{ghp} --force"), None),
            (format!("cat '/run/{ghp}'"), None),
            (
                format!("curl https://hooks.example/{ghp} -d @./f"),
                Some("curl https://hooks.example/* -d @./f".to_string()),
            ),
        ] {
            assert_eq!(mask_tokens(&given, "*"), shown, "{given}");
        }
        for plain in [
            "AKIA_SHORT",
            "npm_config_cache=/tmp",
            "ghp_short",
            "my-ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "hf_hub_download",
            "sk-ant-api03-short",
            "td_short_name",
            "",
        ] {
            assert_eq!(mask_tokens(plain, "*"), None, "{plain}");
        }
    }
}

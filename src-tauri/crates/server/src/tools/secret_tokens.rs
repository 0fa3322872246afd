//! Credentials known by their shape: the prefixes services give the tokens they issue
//! (`ghp_…` GitHub, `glpat-…` GitLab, `xoxb-…` Slack, `sk-ant-…`, `npm_…`, ...), so a token is
//! found where no name says what it is: `https://ghp_…@github.com/org/repo.git`, `echo
//! glpat-… | docker login --password-stdin`, a bare argument. [`super::secrets`] masks them
//! with the credentials it finds by name.

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
    ("sk-ant-", 30),
    ("sk-proj-", 30),
    ("sk_live_", 20),
    ("rk_live_", 20),
    ("npm_", 30),
    ("pypi-", 50),
    ("hf_", 30),
    ("dop_v1_", 40),
    ("shpat_", 30),
    ("AIza", 35),
    // Taskdeck's own: 32 random bytes, URL-safe base64 (`adapters::auth`).
    ("td_", 43),
];

/// `value` with every token of a known shape in it replaced by `with`, `None` when it holds
/// none. A token starts a word (after anything but a letter, digit, `_` or `-`) and runs over
/// letters, digits, `_` and `-`.
pub(super) fn mask_tokens(value: &str, with: &str) -> Option<String> {
    let is_token_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while at < value.len() {
        let rest = &value[at..];
        let starts_word = value[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !is_token_char(c));
        if starts_word && let Some((p, min)) = PREFIXES.iter().find(|(p, _)| rest.starts_with(p)) {
            let len = rest.find(|c| !is_token_char(c)).unwrap_or(rest.len());
            if len >= p.len() + min {
                out.push_str(&value[copied..at]);
                out.push_str(with);
                copied = at + len;
                at += len;
                continue;
            }
        }
        at += rest.chars().next().map_or(1, char::len_utf8);
    }
    (copied > 0).then(|| {
        out.push_str(&value[copied..]);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        for plain in [
            "npm_config_cache=/tmp",
            "ghp_short",
            "my-ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "hf_hub_download",
            "td_short_name",
            "",
        ] {
            assert_eq!(mask_tokens(plain, "*"), None, "{plain}");
        }
    }
}

//! The terms an `ask` puts on its approval: how long the human has (`expiresAfterMs`), what
//! happens when nobody answers in time (`onExpiry`), and how many distinct humans must approve
//! (`humans`, M of N). A rule may set them (`"approval": {...}` on the rule), the policy file
//! may set defaults for every approval (`"approval": {...}` at the top), and what neither sets
//! is [`DEFAULT_EXPIRES_AFTER_MS`], [`OnExpiry::Deny`] and one human.

use serde::{Deserialize, Serialize};

/// How long an approval waits when neither a rule nor the file says: one hour, in ms.
pub const DEFAULT_EXPIRES_AFTER_MS: u64 = 3_600_000;

/// The longest expiry a policy may set: 366 days, in ms.
pub const MAX_EXPIRES_AFTER_MS: u64 = 366 * 24 * 3_600_000;

/// The most humans a rule may require.
pub const MAX_HUMANS: u32 = 10;

/// What an approval nobody answered in time turns into.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnExpiry {
    /// The call is refused (the agent is told it expired).
    #[default]
    Deny,
    /// The call goes on as if approved.
    Allow,
    /// The decision goes back to the agent's own prompt (hooks: Claude Code or Codex asks in
    /// its terminal); for a call made through Taskdeck it is a refusal, like `deny`.
    Ask,
}

impl OnExpiry {
    /// `"deny"`, `"allow"` or `"ask"`.
    pub fn as_str(self) -> &'static str {
        match self {
            OnExpiry::Deny => "deny",
            OnExpiry::Allow => "allow",
            OnExpiry::Ask => "ask",
        }
    }
}

/// Terms as written (a rule's or the file's `approval` object); absent fields fall back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApprovalTerms {
    /// How long the human has, in ms (at most [`MAX_EXPIRES_AFTER_MS`]); 0 = no expiry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 31_622_400_000_i64)]
    pub expires_after_ms: Option<u64>,
    /// What an unanswered approval becomes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_expiry: Option<OnExpiry>,
    /// Distinct humans who must approve (1 to [`MAX_HUMANS`]); a single denial refuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 10)]
    pub humans: Option<u32>,
}

impl ApprovalTerms {
    /// True when nothing is set (the rule or file says nothing about approvals).
    pub fn is_empty(&self) -> bool {
        *self == ApprovalTerms::default()
    }

    /// Errors: `humans` outside 1..=[`MAX_HUMANS`], `expiresAfterMs` over
    /// [`MAX_EXPIRES_AFTER_MS`].
    pub fn check(&self) -> Result<(), String> {
        if let Some(ms) = self
            .expires_after_ms
            .filter(|ms| *ms > MAX_EXPIRES_AFTER_MS)
        {
            return Err(format!(
                "approval.expiresAfterMs is {ms}: at most {MAX_EXPIRES_AFTER_MS} (366 days)"
            ));
        }
        match self.humans {
            Some(n) if n == 0 || n > MAX_HUMANS => Err(format!(
                "approval.humans is {n}: between 1 and {MAX_HUMANS} humans"
            )),
            _ => Ok(()),
        }
    }

    /// These terms over `fallback`, then the built-in defaults.
    pub fn resolve(&self, fallback: &ApprovalTerms) -> Terms {
        let expires = self
            .expires_after_ms
            .or(fallback.expires_after_ms)
            .unwrap_or(DEFAULT_EXPIRES_AFTER_MS);
        Terms {
            expires_after_ms: (expires > 0).then_some(expires),
            on_expiry: self.on_expiry.or(fallback.on_expiry).unwrap_or_default(),
            humans: self.humans.or(fallback.humans).unwrap_or(1).max(1),
        }
    }
}

/// Reads terms only from a JSON object (serde would also take a list of the fields' values).
/// For `#[serde(deserialize_with)]`.
pub fn from_object<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ApprovalTerms, D::Error> {
    let map = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
    serde_json::from_value(serde_json::Value::Object(map)).map_err(serde::de::Error::custom)
}

/// The terms one approval is asked under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terms {
    /// How long the human has, in ms; `None` = no expiry.
    pub expires_after_ms: Option<u64>,
    /// What an unanswered approval becomes.
    pub on_expiry: OnExpiry,
    /// Distinct humans who must approve (at least 1).
    pub humans: u32,
}

impl Default for Terms {
    fn default() -> Self {
        ApprovalTerms::default().resolve(&ApprovalTerms::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_overrides_the_file_and_the_file_the_defaults() {
        let file = ApprovalTerms {
            expires_after_ms: Some(60_000),
            on_expiry: Some(OnExpiry::Allow),
            humans: None,
        };
        let rule = ApprovalTerms {
            humans: Some(2),
            ..ApprovalTerms::default()
        };
        let t = rule.resolve(&file);
        assert_eq!(t.expires_after_ms, Some(60_000));
        assert_eq!(t.on_expiry, OnExpiry::Allow);
        assert_eq!(t.humans, 2);
        let none = ApprovalTerms::default().resolve(&ApprovalTerms::default());
        assert_eq!(none.expires_after_ms, Some(DEFAULT_EXPIRES_AFTER_MS));
        assert_eq!(none.on_expiry, OnExpiry::Deny);
        let never = ApprovalTerms {
            expires_after_ms: Some(0),
            ..ApprovalTerms::default()
        };
        assert_eq!(never.resolve(&file).expires_after_ms, None);
        assert!(
            ApprovalTerms {
                humans: Some(0),
                ..ApprovalTerms::default()
            }
            .check()
            .is_err()
        );
    }
}

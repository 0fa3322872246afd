//! Who a request acts for: a [`Principal`] (the token's name) and its [`Role`], which decides
//! what it may see and answer. The roles, from most to least trusted:
//!
//! | role | sees | answers human-only input requests | administers (tokens, policy, servers) |
//! |---|---|---|---|
//! | `admin` (the admin-token file's token) | every task | yes | yes |
//! | `human` (a named person's token) | every task | yes | no |
//! | `agent` (every other token, `anonymous`) | its own tasks | no (ignored) | no |
//!
//! The engine enforces the first two columns ([`Principal::can_see`],
//! [`Principal::is_human`] in `Engine::answer`); administration is the server's to refuse.

use std::fmt;

/// What a principal may do; see the module table. Stored per token as `agent`, `human` or
/// `admin` ([`Role::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Role {
    /// The admin token: a person with every right.
    Admin,
    /// A named person: sees every task and answers human-only requests; administers nothing.
    Human,
    /// A program: sees its own tasks; its answers to human-only requests are ignored.
    #[default]
    Agent,
}

impl Role {
    /// The stored and wire name: `admin`, `human` or `agent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Human => "human",
            Role::Agent => "agent",
        }
    }

    /// The role named `s` ([`Role::as_str`]), or `None` for any other text.
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "admin" => Some(Role::Admin),
            "human" => Some(Role::Human),
            "agent" => Some(Role::Agent),
            _ => None,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The authenticated identity a request acts for: the owner bound to every task it creates.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    /// Token name, e.g. `claude-code`; `admin` for the admin token, `anonymous` under
    /// `--allow-anonymous`.
    pub name: String,
    /// What it may see and answer.
    pub role: Role,
}

impl Principal {
    /// The principal of the admin token (named `admin`).
    pub fn admin() -> Principal {
        Principal {
            name: "admin".into(),
            role: Role::Admin,
        }
    }
    /// An agent principal named `name`.
    pub fn named(name: impl Into<String>) -> Principal {
        Principal {
            name: name.into(),
            role: Role::Agent,
        }
    }
    /// A human principal named `name`.
    pub fn human(name: impl Into<String>) -> Principal {
        Principal {
            name: name.into(),
            role: Role::Human,
        }
    }
    /// True for the admin token only: it alone manages tokens, the policy and the servers.
    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }
    /// True for a person (the admin or a human): sees every principal's tasks and may answer
    /// human-only input requests.
    pub fn is_human(&self) -> bool {
        matches!(self.role, Role::Admin | Role::Human)
    }
    /// True if this principal may see a task owned by `owner`: a person sees every task, an
    /// agent its own.
    pub fn can_see(&self, owner: &str) -> bool {
        self.is_human() || self.name == owner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_decide_what_a_principal_sees() {
        let (admin, human, agent) = (
            Principal::admin(),
            Principal::human("alice"),
            Principal::named("bot"),
        );
        assert!(admin.can_see("bot") && human.can_see("bot") && agent.can_see("bot"));
        assert!(!agent.can_see("other"));
        assert!(admin.is_admin() && !human.is_admin() && !agent.is_admin());
        assert!(admin.is_human() && human.is_human() && !agent.is_human());
        for r in [Role::Admin, Role::Human, Role::Agent] {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert_eq!(Role::parse("root"), None);
    }
}

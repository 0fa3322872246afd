//! Which handshake an upstream gets: rmcp's `Auto` probe (`server/discover` for 2026-07-28,
//! then `initialize` on 2025-11-25 after a legacy answer or 10 s of silence) until the
//! server's era is known, then that era's handshake alone.
//!
//! A server slower than 10 s to start (`npx` downloading its package, a container image being
//! pulled, a JVM) answers the probe only after rmcp moved on to `initialize`, and rmcp refuses
//! that late answer, failing the handshake. What the late answer was tells the era: an error
//! (`-32601`: no such method) means 2025-11-25, a result means 2026-07-28. The next start then
//! uses that handshake alone and waits for the server however long it takes to start (up to the
//! supervisor's connect timeout). A connection also records its era, so that a restart does not
//! probe again.

use rmcp::{
    model::{ProtocolVersion, RequestId},
    service::{ClientInitializeError, ClientLifecycleMode},
};

/// An upstream's protocol era as far as Taskdeck knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Era {
    /// Not known yet: probe (rmcp's `Auto`).
    #[default]
    Unknown,
    /// 2026-07-28: `server/discover`, per-request metadata.
    Modern,
    /// 2025-11-25 or older: `initialize`.
    Legacy,
}

/// The id rmcp gives its first request of a connection (the probe, in `Auto`).
const PROBE_ID: i64 = 0;

impl Era {
    /// The handshake for this era.
    pub fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Era::Unknown => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
            Era::Modern => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            Era::Legacy => ClientLifecycleMode::Initialize,
        }
    }

    /// The era of a connection that negotiated `version`.
    pub fn of(version: &ProtocolVersion) -> Era {
        match version.has_initialize() {
            true => Era::Legacy,
            false => Era::Modern,
        }
    }

    /// The era a failed `Auto` handshake revealed: the server answered the probe after rmcp
    /// sent `initialize` (see the module's doc). `None` for any other failure.
    pub fn revealed_by(e: &ClientInitializeError) -> Option<Era> {
        let probe = RequestId::Number(PROBE_ID);
        match e {
            ClientInitializeError::UncorrelatedErrorResponse { received, .. }
                if *received == probe =>
            {
                Some(Era::Legacy)
            }
            ClientInitializeError::ConflictInitResponseId(_, received) if *received == probe => {
                Some(Era::Modern)
            }
            ClientInitializeError::LegacyFallbackFailed { fallback, .. } => {
                Era::revealed_by(fallback)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_answer_to_the_probe_tells_the_era() {
        let late_error = ClientInitializeError::UncorrelatedErrorResponse {
            expected: RequestId::Number(1),
            received: RequestId::Number(0),
        };
        assert_eq!(Era::revealed_by(&late_error), Some(Era::Legacy));
        let late_result = ClientInitializeError::ConflictInitResponseId(
            RequestId::Number(1),
            RequestId::Number(0),
        );
        assert_eq!(Era::revealed_by(&late_result), Some(Era::Modern));
        let other = ClientInitializeError::ConflictInitResponseId(
            RequestId::Number(1),
            RequestId::Number(7),
        );
        assert_eq!(Era::revealed_by(&other), None);
        assert_eq!(
            Era::revealed_by(&ClientInitializeError::ConnectionClosed("x".into())),
            None
        );
    }

    #[test]
    fn each_era_has_its_handshake() {
        assert!(matches!(
            Era::Unknown.lifecycle(),
            ClientLifecycleMode::Auto { .. }
        ));
        assert!(matches!(
            Era::Modern.lifecycle(),
            ClientLifecycleMode::Discover { .. }
        ));
        assert_eq!(Era::Legacy.lifecycle(), ClientLifecycleMode::Initialize);
        assert_eq!(Era::of(&ProtocolVersion::V_2025_11_25), Era::Legacy);
        assert_eq!(Era::of(&ProtocolVersion::V_2026_07_28), Era::Modern);
    }
}

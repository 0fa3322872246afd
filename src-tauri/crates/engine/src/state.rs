//! The task state machine, exactly as SEP-2663 §Task Status (and the 2025-11-25 spec) draw it:
//!
//! ```text
//! [create] -> working
//! working        -> input_required | completed | failed | cancelled
//! input_required -> working | completed | failed | cancelled
//! completed | failed | cancelled -> (nothing)
//! ```

use super::{EngineError, TaskStatus};

/// Checks that `from -> to` is a legal transition. A transition to the same non-terminal
/// status is not a transition and is rejected too, so callers never write a no-op event.
///
/// Errors: [`EngineError::IllegalTransition`] for anything the diagram does not allow.
pub fn check_transition(from: TaskStatus, to: TaskStatus) -> Result<(), EngineError> {
    use TaskStatus::*;
    let legal = matches!(
        (from, to),
        (Working, InputRequired | Completed | Failed | Cancelled)
            | (InputRequired, Working | Completed | Failed | Cancelled)
    );
    if legal {
        Ok(())
    } else {
        Err(EngineError::IllegalTransition { from, to })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TaskStatus::*;

    #[test]
    fn exactly_the_spec_diagram() {
        let mut legal = Vec::new();
        for from in TaskStatus::ALL {
            for to in TaskStatus::ALL {
                if check_transition(from, to).is_ok() {
                    legal.push((from, to));
                }
            }
        }
        assert_eq!(
            legal,
            vec![
                (Working, InputRequired),
                (Working, Completed),
                (Working, Failed),
                (Working, Cancelled),
                (InputRequired, Working),
                (InputRequired, Completed),
                (InputRequired, Failed),
                (InputRequired, Cancelled),
            ]
        );
    }
}

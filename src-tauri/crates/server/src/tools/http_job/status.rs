//! The task's status message as one `wait_for_http_job` run writes it: a poll that says what the
//! last one said writes nothing, so a long wait is not one timeline event per poll.

use taskdeck_engine::TaskContext;

/// The task's status message as this run last wrote it: a message is written (a timeline
/// event) only when it differs from the last one.
pub struct Status {
    /// The run's task.
    pub ctx: TaskContext,
    last: String,
}

impl Status {
    /// A writer for `ctx`'s task that has written nothing yet.
    pub fn new(ctx: TaskContext) -> Status {
        Status {
            ctx,
            last: String::new(),
        }
    }

    /// Sets the task's status message to `message`, unless that is what it says already.
    pub async fn set(&mut self, message: String) {
        if message != self.last {
            self.ctx.status_message(message.clone()).await;
            self.last = message;
        }
    }
}

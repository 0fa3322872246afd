//! What an upstream reports during one call, kept so that a server that logs or reports
//! progress in a loop fills neither the task's timeline nor the store: every log message
//! (`notifications/message`) goes to the task's output log (`<data dir>/logs/<taskId>.log`,
//! read by `GET /v1/tasks/{taskId}/log` and the window's Output, its latest
//! [`MAX_LOG_BYTES`] kept, as a command's), and the task's statusMessage and progress take the
//! latest message and progress at most once per [`REPORT_EVERY`] (latest wins; one held back
//! is reported when the interval is up, unless the call ended first).

use std::{
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::time::Instant;

use crate::tools::{
    output::{OutputLog, log_path, status_line},
    run_command::MAX_LOG_BYTES,
};
use taskdeck_engine::TaskContext;

/// Least time between two reports of the same kind (status message, progress) to the task:
/// what `run_command` allows a command's output.
pub const REPORT_EVERY: Duration = Duration::from_millis(250);

/// The reports of one call in flight, and its log file (opened at its first message).
pub struct CallLog {
    ctx: TaskContext,
    path: Option<PathBuf>,
    state: Mutex<State>,
}

/// A progress report: `(progress, total, message)`, as `notifications/progress` has it.
type ProgressReport = (f64, Option<f64>, Option<String>);

struct State {
    /// `None` until the first message; `Some(None)` when the file could not be opened.
    file: Option<Option<OutputLog>>,
    messages: Latest<String>,
    progress: Latest<ProgressReport>,
}

impl CallLog {
    /// The reports of the call of task `ctx`; its log goes under `log_dir` (none without one).
    pub fn new(ctx: &TaskContext, log_dir: Option<&Path>) -> Arc<CallLog> {
        Arc::new(CallLog {
            ctx: ctx.clone(),
            path: log_dir.map(|dir| log_path(dir, ctx.task_id())),
            state: Mutex::new(State {
                file: None,
                messages: Latest::default(),
                progress: Latest::default(),
            }),
        })
    }

    /// The call's task.
    pub fn ctx(&self) -> &TaskContext {
        &self.ctx
    }

    /// A log message of the upstream, `text` after `prefix` (`server [level] logger: `):
    /// written to the log file, each of its lines after the prefix (so that no line can pass
    /// for another server's or level's), and its last line as a command's status line (without
    /// terminal escapes, from its last `\r`), after the prefix, made the status message now or
    /// when [`REPORT_EVERY`] is up.
    pub async fn message(self: &Arc<Self>, prefix: &str, text: &str) {
        let offer = {
            let mut state = self.state.lock().unwrap();
            let path = self.path.as_deref();
            let file = state
                .file
                .get_or_insert_with(|| path.and_then(|p| OutputLog::append(p, MAX_LOG_BYTES)));
            if let Some(file) = file {
                let mut lines: String = text.lines().map(|l| format!("{prefix}{l}\n")).collect();
                if lines.is_empty() {
                    lines = format!("{prefix}\n");
                }
                file.push_lines(lines.as_bytes());
            }
            match status_line(text.lines().last().unwrap_or_default()) {
                Some(shown) => state
                    .messages
                    .offer(format!("{prefix}{shown}"), Instant::now()),
                None => Offer::Held,
            }
        };
        match offer {
            Offer::Now(line) => self.ctx.status_message(line).await,
            Offer::Later(at) => self.report_at(
                at,
                |state| &mut state.messages,
                |ctx, line| async move { ctx.status_message(line).await },
            ),
            Offer::Held => {}
        }
    }

    /// A progress notification: made the task's progress now or when [`REPORT_EVERY`] is up
    /// (its message with Taskdeck's tokens masked).
    pub fn progress(self: &Arc<Self>, (current, total, message): ProgressReport) {
        let message = message.map(crate::tools::secrets::mask_taskdeck_tokens_text);
        let report = (current, total, message);
        let offer = self
            .state
            .lock()
            .unwrap()
            .progress
            .offer(report, Instant::now());
        match offer {
            Offer::Now((current, total, message)) => self.ctx.progress(current, total, message),
            Offer::Later(at) => {
                self.report_at(
                    at,
                    |state| &mut state.progress,
                    |ctx, (current, total, message)| async move {
                        ctx.progress(current, total, message)
                    },
                )
            }
            Offer::Held => {}
        }
    }

    /// At `at`, reports with `report` what the [`Latest`] that `latest` picks holds back then
    /// (waiting on while a report went at once meanwhile).
    fn report_at<T, F, Fut>(
        self: &Arc<Self>,
        mut at: Instant,
        latest: fn(&mut State) -> &mut Latest<T>,
        report: F,
    ) where
        T: Send + 'static,
        F: FnOnce(TaskContext, T) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send,
    {
        let me = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep_until(at).await;
                let due = latest(&mut me.state.lock().unwrap()).due(Instant::now());
                match due {
                    Due::Now(value) => break report(me.ctx.clone(), value).await,
                    Due::At(later) => at = later,
                    Due::Nothing => break,
                }
            }
        });
    }
}

/// One kind of report, at most once per [`REPORT_EVERY`], the latest winning.
struct Latest<T> {
    last: Option<Instant>,
    pending: Option<T>,
    /// A report of `pending` is on its way (at [`Offer::Later`]'s time).
    scheduled: bool,
}

impl<T> Default for Latest<T> {
    fn default() -> Self {
        Latest {
            last: None,
            pending: None,
            scheduled: false,
        }
    }
}

/// What a report on its way does when its time comes ([`Latest::due`]).
#[derive(Debug, PartialEq)]
enum Due<T> {
    /// Report this.
    Now(T),
    /// Wait until then, and ask again.
    At(Instant),
    /// Nothing is held back any more.
    Nothing,
}

/// What to do with a report offered to [`Latest`].
#[derive(Debug, PartialEq)]
enum Offer<T> {
    /// Report it now.
    Now(T),
    /// It is held: report what [`Latest::due`] gives at this time.
    Later(Instant),
    /// It is held, and a report is already on its way.
    Held,
}

impl<T> Latest<T> {
    fn offer(&mut self, value: T, now: Instant) -> Offer<T> {
        match self.last {
            Some(last) if now < last + REPORT_EVERY => {
                self.pending = Some(value);
                if self.scheduled {
                    Offer::Held
                } else {
                    self.scheduled = true;
                    Offer::Later(last + REPORT_EVERY)
                }
            }
            _ => {
                self.last = Some(now);
                self.pending = None;
                Offer::Now(value)
            }
        }
    }

    /// What the report on its way does at `now`: report what is held back, or wait until
    /// later (a report went at once meanwhile, its timer being late), or nothing (that report
    /// took all there was).
    fn due(&mut self, now: Instant) -> Due<T> {
        if let (Some(last), Some(_)) = (self.last, &self.pending)
            && now < last + REPORT_EVERY
        {
            return Due::At(last + REPORT_EVERY);
        }
        self.scheduled = false;
        match self.pending.take() {
            Some(value) => {
                self.last = Some(now);
                Due::Now(value)
            }
            None => Due::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_report_wins_once_per_interval() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut latest = Latest::default();
        assert_eq!(latest.offer(1, t0), Offer::Now(1));
        let at = t0 + REPORT_EVERY;
        assert_eq!(latest.offer(2, t0 + ms(10)), Offer::Later(at));
        assert_eq!(latest.offer(3, t0 + ms(20)), Offer::Held);
        assert_eq!(latest.due(at), Due::Now(3));
        // The interval counts from that report.
        assert_eq!(latest.offer(4, at + ms(1)), Offer::Later(at + REPORT_EVERY));
        assert_eq!(latest.due(at + REPORT_EVERY), Due::Now(4));
        assert_eq!(latest.due(at + REPORT_EVERY * 2), Due::Nothing);
        // Quiet for an interval: the next one goes at once.
        assert_eq!(latest.offer(5, at + REPORT_EVERY * 3), Offer::Now(5));
    }

    #[test]
    fn a_late_timer_does_not_report_twice_in_an_interval() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut latest = Latest::default();
        assert_eq!(latest.offer(1, t0), Offer::Now(1));
        assert_eq!(
            latest.offer(2, t0 + ms(10)),
            Offer::Later(t0 + REPORT_EVERY)
        );
        // The timer is late: a report comes past the interval and goes at once...
        let t1 = t0 + REPORT_EVERY + ms(5);
        assert_eq!(latest.offer(3, t1), Offer::Now(3));
        assert_eq!(latest.offer(4, t1 + ms(1)), Offer::Held);
        // ...and the timer, firing now, waits for the interval from that report.
        assert_eq!(latest.due(t1 + ms(2)), Due::At(t1 + REPORT_EVERY));
        assert_eq!(latest.due(t1 + REPORT_EVERY), Due::Now(4));
    }
}

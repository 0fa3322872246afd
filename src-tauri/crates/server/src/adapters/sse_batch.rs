//! Batching for busy Server-Sent Events streams: the first event after a quiet spell goes out at
//! once; the events that follow within [`WINDOW`] go out together at its end, as one batch that
//! the stream writes as one chunk (one `writev`), and the stream's task wakes once per window
//! instead of once per event.
//!
//! Why: `/v1/events` gets one event per change to any task its reader may see. Under a fleet's
//! load (about 2,500 changes/s) each open stream wrote 2,500 frames a second, one system call
//! and one wake-up of the reader each; with 20 streams open those writes were a sixth
//! of the server's CPU (BENCHMARKS.md, "Fleet of 1,000 agents"). Nothing is dropped or
//! reordered: a batch is the same events, in order, written back to back; a lone change is not
//! delayed at all, and one in a burst by at most [`WINDOW`] ([`BUSY_WINDOW`] while the stream
//! carries more than a person can follow: then fewer, larger writes).

use std::{
    pin::Pin,
    time::{Duration, Instant},
};

use futures::{FutureExt, Stream, StreamExt, stream};

/// How long events after the first of a burst are gathered before they are written: 10 ms,
/// under one frame of a 60 Hz screen, so the UI shows a change no later than it would anyway.
pub(crate) const WINDOW: Duration = Duration::from_millis(10);

/// The window after a busy one (events at [`BUSY_BATCH`] per [`WINDOW`] or faster: 16 in a
/// 10 ms window, 40 in a 25 ms one; the batch after a full one counts as busy): 25 ms. At a fleet's
/// ~2,400 changes/s a stream then makes 40 writes a second instead of 100 (each a system call
/// and a poll of the connection), and a change reaches the screen at most ~15 ms later; the
/// UI's own target for that is 50 ms (BENCHMARKS.md, "UI").
pub(crate) const BUSY_WINDOW: Duration = Duration::from_millis(25);

/// Events per [`WINDOW`] from which a stream counts as busy: 16 in 10 ms, i.e. 1,600 a second,
/// more than anyone reads. The rate is what counts: a window of [`BUSY_WINDOW`] needs 40 to
/// keep the stream busy, and one with fewer brings it back to [`WINDOW`].
pub(crate) const BUSY_BATCH: u32 = 16;

/// Most events taken into one batch; the rest go in the next one, without waiting.
pub(crate) const MAX_BATCH: usize = 512;

/// `inner`'s events in batches, as the module describes: the first event after a window in
/// which nothing came is yielded at once, alone; those that come in the [`WINDOW`] after it are
/// yielded together when it ends (at most [`MAX_BATCH`] a batch), in order; after a window
/// whose events came at [`BUSY_BATCH`] per [`WINDOW`] or faster, the next window is
/// [`BUSY_WINDOW`] long. `inner` is not
/// polled during a window, so its events wake the stream's task once a window, not once each.
/// With `idle` set, an empty batch is yielded after each `idle` in which nothing came (the
/// caller's keep-alive). Ends when `inner` ends, after yielding what was gathered.
pub(crate) fn batched<S>(
    inner: S,
    idle: Option<Duration>,
) -> impl Stream<Item = Vec<S::Item>> + Send
where
    S: Stream + Send + 'static,
    S::Item: Send,
{
    batched_in_windows(inner, WINDOW, BUSY_WINDOW, idle)
}

/// [`batched`] with windows of `window`, and `busy_window` after one that gathered events at
/// [`BUSY_BATCH`] per `window` or faster (the tests use longer windows than [`WINDOW`], so that
/// a busy machine's scheduling delays stay well inside them).
fn batched_in_windows<S>(
    inner: S,
    window: Duration,
    busy_window: Duration,
    idle: Option<Duration>,
) -> impl Stream<Item = Vec<S::Item>> + Send
where
    S: Stream + Send + 'static,
    S::Item: Send,
{
    struct State<S> {
        inner: Pin<Box<S>>,
        /// When the current window ends; `None` after a window in which nothing came, when
        /// the next event leads a new one.
        window_end: Option<Instant>,
        /// How long the current window is.
        window_len: Duration,
        ended: bool,
    }
    let start = State {
        inner: Box::pin(inner),
        window_end: None,
        window_len: window,
        ended: false,
    };
    stream::unfold(start, move |mut st| async move {
        loop {
            if st.ended {
                return None;
            }
            let Some(window_end) = st.window_end else {
                let first = match idle {
                    None => st.inner.next().await?,
                    Some(idle) => match tokio::time::timeout(idle, st.inner.next()).await {
                        Ok(first) => first?,
                        Err(_) => return Some((Vec::new(), st)),
                    },
                };
                st.window_len = window;
                st.window_end = Some(Instant::now() + window);
                return Some((vec![first], st));
            };
            // Gathers what came during the window: sleeps until it ends without waiting on
            // `inner`, whose every event would wake this task (and poll its connection) once
            // more, then takes what is ready. A window that ended while nobody read the stream
            // takes only what is ready. A window in which nothing came yields nothing: the next
            // event leads a new one.
            tokio::time::sleep_until(window_end.into()).await;
            let mut batch = Vec::new();
            while batch.len() < MAX_BATCH {
                // Unconstrained: tokio's cooperative budget (128 receives per poll) would
                // otherwise end the batch early, with the rest a window late.
                match tokio::task::unconstrained(st.inner.next()).now_or_never() {
                    Some(Some(item)) => batch.push(item),
                    Some(None) => {
                        st.ended = true;
                        break;
                    }
                    None => break,
                }
            }
            if !batch.is_empty() {
                // A full batch may have left events ready: they go at once, in the next one.
                // Busy: `n` events in a window of `window_len` is BUSY_BATCH per `window` or
                // more (a reader that came late counts what waited as if it came in time).
                let n = batch.len();
                let next = if n == MAX_BATCH {
                    Duration::ZERO
                } else if window * n as u32 >= st.window_len * BUSY_BATCH {
                    busy_window
                } else {
                    window
                };
                st.window_len = next;
                st.window_end = Some(Instant::now() + next);
                return Some((batch, st));
            }
            st.window_end = None;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc;
    use tokio_stream::wrappers::UnboundedReceiverStream;

    /// Receives from `s` until `n` items came or `limit` passed; returns them with the time
    /// each came, from `t0`.
    async fn take_timed(
        s: &mut (impl Stream<Item = u32> + Unpin),
        n: usize,
        t0: Instant,
    ) -> Vec<(u32, Duration)> {
        let mut got = Vec::new();
        while got.len() < n {
            match tokio::time::timeout(Duration::from_secs(2), s.next()).await {
                Ok(Some(v)) => got.push((v, t0.elapsed())),
                _ => break,
            }
        }
        got
    }

    /// The tests' window: long enough that a loaded machine's scheduling delays (a few ms, at
    /// times tens) cannot pass for it, or hide it.
    const TEST_WINDOW: Duration = Duration::from_millis(300);

    /// The tests' busy window, as much longer than [`TEST_WINDOW`] as [`BUSY_WINDOW`] is.
    const TEST_BUSY_WINDOW: Duration = Duration::from_millis(750);

    /// A channel and the batches of what is sent on it, in the tests' windows.
    fn test_batches(
        idle: Option<Duration>,
    ) -> (
        mpsc::UnboundedSender<u32>,
        Pin<Box<impl Stream<Item = Vec<u32>> + Send>>,
    ) {
        let (tx, rx) = mpsc::unbounded_channel();
        let batches = batched_in_windows(
            UnboundedReceiverStream::new(rx),
            TEST_WINDOW,
            TEST_BUSY_WINDOW,
            idle,
        );
        (tx, Box::pin(batches))
    }

    #[tokio::test]
    async fn a_busy_stream_gets_longer_windows_and_a_calmer_one_the_short_one_again() {
        // The test windows keep BUSY_WINDOW's ratio to WINDOW: busy is 16 events in a short
        // window, 40 in a long one.
        assert_eq!(TEST_BUSY_WINDOW * 10, TEST_WINDOW * 25);
        assert_eq!(BUSY_WINDOW * 10, WINDOW * 25);
        let at_busy_rate_long = BUSY_BATCH * 5 / 2;
        // Bounds that tell a short window from a long one with room for a loaded machine.
        let between = (TEST_WINDOW + TEST_BUSY_WINDOW) / 2;
        let (tx, mut s) = test_batches(None);
        tx.send(0u32).unwrap();
        assert_eq!(s.next().await, Some(vec![0]));
        let mut next = 1u32;
        // Sends `n` events now; returns how long the batch of exactly them took to come.
        let mut window_with = async |n: u32| {
            let t = Instant::now();
            let sent: Vec<u32> = (next..next + n).collect();
            next += n;
            for &i in &sent {
                tx.send(i).unwrap();
            }
            assert_eq!(s.next().await, Some(sent));
            t.elapsed()
        };
        // A short window with BUSY_BATCH events: busy, so the next one is long.
        let short = window_with(BUSY_BATCH).await;
        assert!(short < between, "the first window lasted {short:?}");
        // That long window with as many events, below the rate of a long one: not busy.
        let long = window_with(BUSY_BATCH).await;
        assert!(
            long >= between,
            "after a busy window the next lasted {long:?}"
        );
        // So a short one follows; at the busy rate again.
        let short = window_with(BUSY_BATCH).await;
        assert!(
            short < between,
            "after a calm window the next lasted {short:?}"
        );
        // A long one at exactly the busy rate keeps the stream busy: another long one.
        let long = window_with(at_busy_rate_long).await;
        assert!(
            long >= between,
            "after a busy window the next lasted {long:?}"
        );
        let long = window_with(1).await;
        assert!(
            long >= between,
            "a window at the busy rate was followed by {long:?}"
        );
        // One event in a long window: calm, the short window is back.
        let short = window_with(1).await;
        assert!(
            short < between,
            "after a calm window the next lasted {short:?}"
        );
    }

    #[tokio::test]
    async fn a_lone_event_is_not_delayed_and_a_burst_keeps_every_event_in_order() {
        let (tx, batches) = test_batches(None);
        let mut s = batches.flat_map(stream::iter);
        let t0 = Instant::now();
        tx.send(1).unwrap();
        let first = take_timed(&mut s, 1, t0).await;
        assert_eq!(first[0].0, 1);
        assert!(
            first[0].1 < TEST_WINDOW / 2,
            "a lone event waited {:?}, the window is {TEST_WINDOW:?}",
            first[0].1
        );
        // A burst right after: every event, in order, none lost.
        for i in 2..=1000 {
            tx.send(i).unwrap();
        }
        let rest: Vec<u32> = take_timed(&mut s, 999, t0)
            .await
            .into_iter()
            .map(|(v, _)| v)
            .collect();
        assert_eq!(rest, (2..=1000).collect::<Vec<_>>());
        // Once the window after the burst (a busy one) has ended, the next lone event goes
        // out at once: the stream, polled again, takes what is ready.
        tokio::time::sleep(TEST_BUSY_WINDOW + TEST_WINDOW).await;
        let t1 = Instant::now();
        tx.send(7).unwrap();
        let lone = take_timed(&mut s, 1, t1).await;
        assert_eq!(lone[0].0, 7);
        assert!(lone[0].1 < TEST_WINDOW / 2, "waited {:?}", lone[0].1);
        drop(tx);
        assert_eq!(s.next().await, None);
    }

    #[tokio::test]
    async fn events_that_follow_the_first_come_together_at_the_end_of_the_window() {
        let (tx, batches) = test_batches(None);
        let mut s = batches.flat_map(stream::iter);
        let t0 = Instant::now();
        tx.send(0).unwrap();
        take_timed(&mut s, 1, t0).await;
        // Three events spread over the first part of the window (50 ms apart) are held back
        // to its end, then all three are ready at once.
        let sender = tokio::spawn(async move {
            for i in 1..=3 {
                tx.send(i).unwrap();
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            tx
        });
        let got = take_timed(&mut s, 3, t0).await;
        assert_eq!(
            got.iter().map(|(v, _)| *v).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
        let spread = got[2].1 - got[0].1;
        assert!(
            spread < Duration::from_millis(50),
            "the batch's events came {spread:?} apart; they were sent 100 ms apart"
        );
        assert!(
            got[0].1 >= TEST_WINDOW,
            "the batch came after {:?}, before the window ended",
            got[0].1
        );
        drop(sender.await.unwrap());
        assert_eq!(s.next().await, None);
    }

    #[tokio::test]
    async fn events_in_a_window_wake_the_stream_once_at_its_end_not_each() {
        use futures::task::{ArcWake, waker};
        use std::sync::{
            Arc,
            atomic::{AtomicUsize, Ordering},
        };
        use std::task::{Context, Poll};
        /// Counts the wake-ups of the task that polls the stream.
        struct Wakes(AtomicUsize);
        impl ArcWake for Wakes {
            fn wake_by_ref(w: &Arc<Self>) {
                w.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let (tx, mut s) = test_batches(None);
        tx.send(0u32).unwrap();
        assert_eq!(s.next().await, Some(vec![0]));
        let wakes = Arc::new(Wakes(AtomicUsize::new(0)));
        let waker = waker(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        // In the window that the first event opened: the events that come now wake no one.
        assert!(s.as_mut().poll_next(&mut cx).is_pending());
        for i in 1..=100 {
            tx.send(i).unwrap();
        }
        assert_eq!(
            wakes.0.load(Ordering::SeqCst),
            0,
            "events during the window woke the stream's task"
        );
        // The window's end does, once, and the poll then takes all of them.
        tokio::time::sleep(TEST_WINDOW + TEST_WINDOW / 2).await;
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
        match s.as_mut().poll_next(&mut cx) {
            Poll::Ready(Some(batch)) => assert_eq!(batch, (1..=100).collect::<Vec<_>>()),
            other => panic!("after the window: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_window_takes_everything_that_came_in_it_up_to_a_full_batch() {
        let (tx, mut s) = test_batches(None);
        tx.send(0u32).unwrap();
        assert_eq!(s.next().await, Some(vec![0]));
        // More than tokio's cooperative budget (128 receives a poll) in one window.
        for i in 1..=300 {
            tx.send(i).unwrap();
        }
        assert_eq!(s.next().await, Some((1..=300).collect::<Vec<_>>()));
        // More than a batch: the rest follows at once, not a window later.
        for i in 0..(MAX_BATCH as u32 + 10) {
            tx.send(i).unwrap();
        }
        assert_eq!(s.next().await.map(|b| b.len()), Some(MAX_BATCH));
        let t = Instant::now();
        assert_eq!(s.next().await.map(|b| b.len()), Some(10));
        assert!(
            t.elapsed() < TEST_WINDOW / 2,
            "the rest came after {:?}",
            t.elapsed()
        );
    }

    #[tokio::test]
    async fn a_burst_comes_as_one_batch_and_a_quiet_stream_as_empty_ones() {
        let idle = Duration::from_millis(400);
        let (tx, mut s) = test_batches(Some(idle));
        let t0 = Instant::now();
        // Nothing comes: an empty batch after each idle period.
        assert_eq!(s.next().await, Some(vec![]));
        assert!(t0.elapsed() >= idle, "after {:?}", t0.elapsed());
        assert_eq!(s.next().await, Some(vec![]));
        assert!(t0.elapsed() >= idle * 2, "after {:?}", t0.elapsed());
        // A lone event alone and at once; a burst after it in one batch, in order.
        tx.send(0u32).unwrap();
        assert_eq!(s.next().await, Some(vec![0]));
        for i in 1..=100 {
            tx.send(i).unwrap();
        }
        assert_eq!(s.next().await, Some((1..=100).collect::<Vec<_>>()));
        // The window after the burst, in which nothing came, yields nothing of its own: the
        // next thing is the idle period's empty batch, a whole idle period after the burst.
        let t1 = Instant::now();
        assert_eq!(s.next().await, Some(vec![]));
        assert!(t1.elapsed() >= idle, "after {:?}", t1.elapsed());
        drop(tx);
        assert_eq!(s.next().await, None);
    }
}

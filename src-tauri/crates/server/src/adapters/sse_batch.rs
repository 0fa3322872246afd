//! Batching for busy Server-Sent Events streams: the first event after a quiet spell goes out at
//! once; the events that follow within [`WINDOW`] go out together at its end, as one batch that
//! the stream writes as one chunk (one `writev`).
//!
//! Why: `/v1/events` gets one event per change to any task its reader may see. Under a fleet's
//! load (about 2,500 changes/s) each open stream wrote 2,500 frames a second, one system call
//! and one wake-up of the reader each; with 20 streams open those writes were a sixth
//! of the server's CPU (BENCHMARKS.md, "Fleet of 1,000 agents"). Nothing is dropped or
//! reordered: a batch is the same events, in order, written back to back; a lone change is not
//! delayed at all, and one in a burst by at most [`WINDOW`].

use std::{
    pin::Pin,
    time::{Duration, Instant},
};

use futures::{Stream, StreamExt, stream};

/// How long events after the first of a burst are gathered before they are written: 10 ms,
/// under one frame of a 60 Hz screen, so the UI shows a change no later than it would anyway.
pub(crate) const WINDOW: Duration = Duration::from_millis(10);

/// Most events gathered into one batch; the rest wait for the next one.
pub(crate) const MAX_BATCH: usize = 512;

/// `inner`'s events in batches, as the module describes: the first event after a window in
/// which nothing came is yielded at once, alone; later ones are gathered for [`WINDOW`] (or
/// until [`MAX_BATCH`] are ready) and yielded together, in order. With `idle` set, an empty
/// batch is yielded after each `idle` in which nothing came (the caller's keep-alive). Ends
/// when `inner` ends, after yielding what was gathered.
pub(crate) fn batched<S>(
    inner: S,
    idle: Option<Duration>,
) -> impl Stream<Item = Vec<S::Item>> + Send
where
    S: Stream + Send + 'static,
    S::Item: Send,
{
    batched_in_windows(inner, WINDOW, idle)
}

/// [`batched`] with windows of `window` (the tests use longer ones than [`WINDOW`], so that a
/// busy machine's scheduling delays stay well inside them).
fn batched_in_windows<S>(
    inner: S,
    window: Duration,
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
        ended: bool,
    }
    let start = State {
        inner: Box::pin(inner),
        window_end: None,
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
                st.window_end = Some(Instant::now() + window);
                return Some((vec![first], st));
            };
            // Gathers until the window ends; a window that ended while nobody read the stream
            // takes only what is ready. A window in which nothing came yields nothing: the
            // next event leads a new one.
            let mut batch = Vec::new();
            let deadline = tokio::time::sleep_until(window_end.into());
            tokio::pin!(deadline);
            while batch.len() < MAX_BATCH {
                tokio::select! {
                    biased;
                    item = st.inner.next() => match item {
                        Some(item) => batch.push(item),
                        None => {
                            st.ended = true;
                            break;
                        }
                    },
                    () = &mut deadline => break,
                }
            }
            if !batch.is_empty() {
                st.window_end = Some(Instant::now() + window);
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

    #[tokio::test]
    async fn a_lone_event_is_not_delayed_and_a_burst_keeps_every_event_in_order() {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut s = Box::pin(
            batched_in_windows(UnboundedReceiverStream::new(rx), TEST_WINDOW, None)
                .flat_map(stream::iter),
        );
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
        // After a quiet window, the next lone event again goes out at once.
        tokio::time::sleep(TEST_WINDOW * 2).await;
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
        let (tx, rx) = mpsc::unbounded_channel();
        let mut s = Box::pin(
            batched_in_windows(UnboundedReceiverStream::new(rx), TEST_WINDOW, None)
                .flat_map(stream::iter),
        );
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
    async fn a_burst_comes_as_one_batch_and_a_quiet_stream_as_empty_ones() {
        let idle = Duration::from_millis(400);
        let (tx, rx) = mpsc::unbounded_channel();
        let mut s = Box::pin(batched_in_windows(
            UnboundedReceiverStream::new(rx),
            TEST_WINDOW,
            Some(idle),
        ));
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

//! The TTL sweeper: a background task that sleeps until the next task's `createdAt + ttlMs` or
//! the next idempotency key's expiry (woken early when an earlier deadline appears), expires
//! what is due, and enforces the store caps; each pass also drops the `deleted` events older
//! than [`DELETED_EVENTS_KEPT_MS`](super::store::DELETED_EVENTS_KEPT_MS) (only passes delete
//! tasks, so only passes add them) and the expired idempotency keys. No polling interval: when
//! nothing has a deadline it sleeps until woken.

use std::sync::atomic::Ordering;

use super::{Engine, clock::now_ms, idempotency};

pub(crate) fn spawn(engine: Engine) {
    tokio::spawn(async move {
        let inner = engine.inner.clone();
        loop {
            if let Err(e) = sweep_once(&engine).await {
                tracing::error!("sweeper: {e}");
            }
            let tasks = inner.store.next_expiry().ok().flatten();
            let keys = inner.store.read(idempotency::next_expiry).ok().flatten();
            let next = tasks.into_iter().chain(keys).min().unwrap_or(i64::MAX);
            inner.next_deadline.store(next, Ordering::Relaxed);
            let wait_ms = if next == i64::MAX {
                u64::MAX / 4
            } else {
                (next - now_ms()).max(0) as u64
            };
            tokio::select! {
                _ = inner.shutdown.cancelled() => return,
                _ = inner.sweeper_wake.notified() => {}
                _ = tokio::time::sleep(std::time::Duration::from_millis(wait_ms.min(86_400_000 * 365))) => {}
            }
        }
    });
}

async fn sweep_once(engine: &Engine) -> Result<(), super::EngineError> {
    loop {
        let due = engine.inner.store.expired(now_ms(), 500)?;
        if due.is_empty() {
            break;
        }
        for id in &due {
            engine.expire(id).await?;
        }
    }
    engine.enforce_caps().await?;
    let now = now_ms();
    let before = now - super::store::DELETED_EVENTS_KEPT_MS;
    engine
        .inner
        .store
        .write(move |w| {
            w.prune_deleted_events(before)?;
            idempotency::prune(w.conn, now)
        })
        .await?;
    Ok(())
}

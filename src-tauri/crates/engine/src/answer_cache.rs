//! The cache of `tasks/get` answers: the `GetTaskResult` JSON of recently polled tasks, so that
//! an agent polling a task (SEP-2663 §Task Polling) costs a hash lookup instead of a SQLite
//! read transaction.
//!
//! The store stays the source of truth. The writer thread invalidates every task a commit
//! touched right after the commit and before it publishes the change or acknowledges the write,
//! so an answer read after an acknowledged write (or after its change was published) is never
//! older than that write. A reader that misses fills the cache with what it read only if no
//! commit invalidated anything since its miss (a generation counter): a read that raced a
//! commit cannot leave a stale answer behind.

use std::sync::{Arc, Mutex};

use hashlink::LruCache;

/// One cached answer: the owner (for the visibility check, never sent) and the `GetTaskResult`
/// object as JSON text.
#[derive(Debug)]
pub struct CachedAnswer {
    /// The task's principal.
    pub owner: String,
    /// The task's status: adapters that show an `input_required` task differently to
    /// different clients (which questions each may answer) read it to skip the cached JSON.
    pub status: super::TaskStatus,
    /// The `GetTaskResult` object (with `resultType: "complete"`), as
    /// [`crate::detailed_task::DetailedTask::get_result_json`] renders it.
    pub json: String,
    /// Other renderings of the same task that adapters made (e.g. what one kind of client is
    /// shown of a waiting task), keyed by the adapter's own small number. They live and die
    /// with this answer: a write to the task drops the answer, and with it every rendering.
    renderings: Mutex<Vec<(u8, Arc<str>)>>,
}

impl CachedAnswer {
    /// An answer for a task owned by `owner`, with no renderings yet.
    pub fn new(owner: String, status: super::TaskStatus, json: String) -> CachedAnswer {
        CachedAnswer {
            owner,
            status,
            json,
            renderings: Mutex::new(Vec::new()),
        }
    }

    /// The rendering kept under `key`, if one was.
    pub fn rendering(&self, key: u8) -> Option<Arc<str>> {
        let kept = self.renderings.lock().unwrap();
        kept.iter().find(|(k, _)| *k == key).map(|(_, r)| r.clone())
    }

    /// Keeps `rendering` under `key`. It must describe the task as it stood when this answer
    /// was read or later (a read made after this answer was obtained): a later write drops
    /// the answer before it is acknowledged, so a rendering is never older than the answer
    /// it is kept with.
    pub fn keep_rendering(&self, key: u8, rendering: Arc<str>) {
        let mut kept = self.renderings.lock().unwrap();
        if !kept.iter().any(|(k, _)| *k == key) {
            kept.push((key, rendering));
        }
    }

    /// Bytes this entry holds (key, owner, JSON, and a fixed 96 for the entry itself).
    fn weight(&self, task_id: &str) -> usize {
        task_id.len() + self.owner.len() + self.json.len() + 96
    }
}

/// A commit count, taken at a miss and checked when filling (see [`AnswerCache::fill`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generation(u64);

/// Least recently used answers up to a byte budget. Cheap to share behind an `Arc`.
pub struct AnswerCache {
    inner: Mutex<Inner>,
    budget_bytes: usize,
}

struct Inner {
    generation: u64,
    map: LruCache<String, Arc<CachedAnswer>>,
    bytes: usize,
}

impl AnswerCache {
    /// Answers larger than this (bytes of JSON) are never cached: they are read each time.
    pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

    /// An empty cache holding at most `budget_bytes` (counted as in `CachedAnswer::weight`).
    pub fn new(budget_bytes: usize) -> AnswerCache {
        AnswerCache {
            inner: Mutex::new(Inner {
                generation: 0,
                map: LruCache::new_unbounded(),
                bytes: 0,
            }),
            budget_bytes,
        }
    }

    /// The cached answer for `task_id`, or on a miss the generation to hand to [`Self::fill`].
    pub fn get(&self, task_id: &str) -> Result<Arc<CachedAnswer>, Generation> {
        let mut inner = self.inner.lock().unwrap();
        match inner.map.get(task_id) {
            Some(answer) => Ok(answer.clone()),
            None => Err(Generation(inner.generation)),
        }
    }

    /// Caches `answer`, read from the store after the miss that returned `seen`, unless a
    /// commit invalidated anything since (then the answer may predate it and is dropped) or it
    /// is larger than [`Self::MAX_ANSWER_BYTES`]. Evicts the least recently used answers to
    /// stay within the budget.
    pub fn fill(&self, task_id: &str, answer: Arc<CachedAnswer>, seen: Generation) {
        if answer.json.len() > Self::MAX_ANSWER_BYTES {
            return;
        }
        let mut inner = self.inner.lock().unwrap();
        if inner.generation != seen.0 {
            return;
        }
        let weight = answer.weight(task_id);
        if let Some(old) = inner.map.insert(task_id.to_string(), answer) {
            inner.bytes -= old.weight(task_id);
        }
        inner.bytes += weight;
        while inner.bytes > self.budget_bytes {
            match inner.map.remove_lru() {
                Some((id, old)) => inner.bytes -= old.weight(&id),
                None => break,
            }
        }
    }

    /// Forgets the answers of `task_ids` and starts a new generation. The writer calls it after
    /// every commit, with every task the commit changed, before anyone learns of the commit.
    pub fn invalidate<'a>(&self, task_ids: impl IntoIterator<Item = &'a str>) {
        let mut inner = self.inner.lock().unwrap();
        inner.generation += 1;
        for id in task_ids {
            if let Some(old) = inner.map.remove(id) {
                inner.bytes -= old.weight(id);
            }
        }
    }

    /// How many answers are cached (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.inner.lock().unwrap().map.len()
    }

    /// Whether no answer is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(owner: &str, json: &str) -> Arc<CachedAnswer> {
        Arc::new(CachedAnswer::new(
            owner.into(),
            crate::TaskStatus::Working,
            json.into(),
        ))
    }

    #[test]
    fn an_answer_keeps_the_first_rendering_under_each_key() {
        let a = answer("o", "{}");
        assert_eq!(a.rendering(1), None);
        a.keep_rendering(1, "first".into());
        a.keep_rendering(1, "second".into());
        a.keep_rendering(2, "other".into());
        assert_eq!(a.rendering(1).as_deref(), Some("first"));
        assert_eq!(a.rendering(2).as_deref(), Some("other"));
    }

    #[test]
    fn a_fill_after_a_miss_is_served_until_invalidated() {
        let cache = AnswerCache::new(1 << 20);
        let seen = cache.get("t1").unwrap_err();
        cache.fill("t1", answer("alice", "{\"status\":\"working\"}"), seen);
        assert_eq!(cache.get("t1").unwrap().json, "{\"status\":\"working\"}");
        cache.invalidate(["t1"]);
        assert!(cache.get("t1").is_err());
    }

    #[test]
    fn a_fill_that_raced_a_commit_is_dropped() {
        let cache = AnswerCache::new(1 << 20);
        let seen = cache.get("t1").unwrap_err();
        // A commit lands between the miss and the fill (here: of another task; the reader
        // cannot tell which tasks it changed, so the fill is dropped either way).
        cache.invalidate(["t2"]);
        cache.fill("t1", answer("alice", "{\"status\":\"working\"}"), seen);
        assert!(cache.get("t1").is_err());
        let seen = cache.get("t1").unwrap_err();
        cache.fill("t1", answer("alice", "{\"status\":\"completed\"}"), seen);
        assert_eq!(cache.get("t1").unwrap().json, "{\"status\":\"completed\"}");
    }

    #[test]
    fn the_budget_evicts_the_least_recently_used_and_large_answers_are_not_kept() {
        let json = "x".repeat(1000);
        // Room for two entries of ~1.1 KB, not three.
        let cache = AnswerCache::new(2500);
        for id in ["a", "b"] {
            let seen = cache.get(id).unwrap_err();
            cache.fill(id, answer("p", &json), seen);
        }
        assert!(cache.get("a").is_ok()); // "a" is now the most recently used
        let seen = cache.get("c").unwrap_err();
        cache.fill("c", answer("p", &json), seen);
        assert!(cache.get("a").is_ok());
        assert!(cache.get("b").is_err());
        assert!(cache.get("c").is_ok());
        assert_eq!(cache.len(), 2);

        let big = "y".repeat(AnswerCache::MAX_ANSWER_BYTES + 1);
        let cache = AnswerCache::new(1 << 30);
        let seen = cache.get("big").unwrap_err();
        cache.fill("big", answer("p", &big), seen);
        assert!(cache.is_empty());
    }
}

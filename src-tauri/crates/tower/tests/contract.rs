//! tower-mcp's own contract suites for `TaskStore`, run unmodified against [`TaskdeckStore`]:
//! `task_store_contract` (required methods) and `task_store_optional_contract` (the methods
//! with defaults, all of which this store implements). Each check gets a fresh store: a new
//! directory, so a new SQLite file, under one temp dir that lives for the test.

use std::sync::atomic::{AtomicUsize, Ordering};

use taskdeck_tower::TaskdeckStore;
use tower_mcp::testing::store_contracts::{task_store_contract, task_store_optional_contract};

/// A constructor of empty stores, each in its own directory under `root`.
fn fresh_stores(root: &tempfile::TempDir) -> impl Fn() -> TaskdeckStore + '_ {
    let made = AtomicUsize::new(0);
    move || {
        let dir = root
            .path()
            .join(format!("store-{}", made.fetch_add(1, Ordering::Relaxed)));
        TaskdeckStore::open(&dir).expect("open a fresh store")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn taskdeck_store_keeps_the_task_store_contract() {
    let root = tempfile::tempdir().unwrap();
    task_store_contract(fresh_stores(&root)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn taskdeck_store_keeps_the_optional_task_store_contract() {
    let root = tempfile::tempdir().unwrap();
    task_store_optional_contract(fresh_stores(&root)).await;
}

//! tower-mcp's own contract suites for `TaskStore`, run unmodified against
//! [`RemoteTaskdeckStore`]: `task_store_contract` and `task_store_optional_contract`, against a
//! real `taskdeck serve` started by the test, with a fresh principal (a new token, so an empty
//! store) for every check.

mod serve;

use serve::Taskdeck;
use taskdeck_tower::RemoteTaskdeckStore;
use tower_mcp::testing::store_contracts::{task_store_contract, task_store_optional_contract};

/// A constructor of empty remote stores on `taskdeck`, each with its own principal. The suites
/// take a plain `Fn() -> S`, so the connection is made on this multi-threaded runtime's
/// current thread.
fn fresh_stores(taskdeck: &Taskdeck) -> impl Fn() -> RemoteTaskdeckStore + '_ {
    move || {
        let token = taskdeck.fresh_token();
        tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current()
                .block_on(RemoteTaskdeckStore::connect(&taskdeck.url, &token))
        })
        .expect("connect to taskdeck serve")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_store_keeps_the_task_store_contract() {
    let taskdeck = Taskdeck::start().await;
    task_store_contract(fresh_stores(&taskdeck)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_store_keeps_the_optional_task_store_contract() {
    let taskdeck = Taskdeck::start().await;
    task_store_optional_contract(fresh_stores(&taskdeck)).await;
}

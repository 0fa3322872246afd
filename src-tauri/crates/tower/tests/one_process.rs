//! One process opens an embedded store at a time: `TaskdeckStore::open` holds an exclusive lock
//! on the directory's `taskdeck.lock` (the lock file of a Taskdeck data dir), so a second open,
//! in the same process or in another (the example server, started on the same directory),
//! fails naming the directory, and the directory opens again once the first store is dropped.

use std::{path::Path, process::Command};

use taskdeck_tower::TaskdeckStore;

/// The example server `name`, built by `cargo test` next to this test (`target/debug/examples`).
fn example_binary(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let debug = exe.parent().and_then(Path::parent).unwrap();
    debug.join("examples").join(name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_open_of_the_same_directory_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let first = TaskdeckStore::open(dir.path()).unwrap();

    let Err(error) = TaskdeckStore::open(dir.path()) else {
        panic!("a second store opened the same directory");
    };
    let message = error.to_string();
    assert!(
        message.contains(&dir.path().display().to_string()) && message.contains("already open"),
        "{message}"
    );

    // Another process: the example server exits at once with the same error.
    let out = tokio::task::block_in_place(|| {
        Command::new(example_binary("durable_tasks"))
            .arg(dir.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    });
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("already open"), "{stderr}");

    drop(first);
    TaskdeckStore::open(dir.path()).expect("the directory opens again once the first is dropped");
}

//! SQLite on a rollfs mount: transactions in rollback-journal (DELETE) mode with
//! synchronous=FULL (see `open`) commit through the f2fs atomic-write ioctls when SQLite is built with
//! SQLITE_ENABLE_BATCH_ATOMIC_WRITE (the workspace's .cargo/config.toml does that); the
//! database passes `PRAGMA integrity_check` after a clean remount and after replayed
//! crashes, and keeps every transaction whose COMMIT had returned.

use rollfs_tests::*;
use rusqlite::Connection;
use std::ffi::OsStr;
use std::path::Path;

/// DELETE journal mode with synchronous=FULL. With FULL, SQLite does not sync the
/// directory after unlinking a rollback journal; a crash could then resurrect the journal
/// of an early (non-batch) transaction, and since batch-atomic transactions write no
/// journal that would replace it, SQLite would "roll back" with the stale journal and
/// discard later committed transactions. rollfs prevents that: an atomic commit makes the
/// names removed from its directory since the last checkpoint durable (core/src/atomic.rs).
fn open(db: &Path) -> Connection {
    let c = Connection::open(db).unwrap();
    c.pragma_update(None, "journal_mode", "DELETE").unwrap();
    c.pragma_update(None, "synchronous", "FULL").unwrap();
    c
}

fn has_batch_atomic(c: &Connection) -> bool {
    let mut st = c.prepare("PRAGMA compile_options").unwrap();
    let opts: Vec<String> = st.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    opts.iter().any(|o| o == "ENABLE_BATCH_ATOMIC_WRITE")
}

/// True when the workspace asks for SQLite with batch atomic writes (then the test
/// insists on them; without the setting it only checks integrity and durability).
fn batch_atomic_configured() -> bool {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::fs::read_to_string(root.join(".cargo/config.toml"))
        .is_ok_and(|s| s.contains("SQLITE_ENABLE_BATCH_ATOMIC_WRITE"))
}

/// Integrity-checks the database and counts the rows; `None` when the table does not
/// exist (its CREATE had not committed).
fn integrity_and_count(db: &Path) -> Option<i64> {
    let c = open(db);
    let ok: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok", "integrity_check of {}", db.display());
    match c.query_row("SELECT count(*) FROM t", [], |r| r.get(0)) {
        Ok(n) => Some(n),
        Err(e) if e.to_string().contains("no such table") => None,
        Err(e) => panic!("{}: {e}", db.display()),
    }
}

#[test]
fn sqlite_transactions_commit_atomically_and_survive_crashes() {
    let img = Image::new("128M", &[]);
    let log = img.dir.path().join("writes.log");
    let m = Mount::new(&img.path, &[OsStr::new("--record-writes"), log.as_os_str()]);
    let db = m.path("test.db");
    let c = open(&db);
    let batch = has_batch_atomic(&c);
    if batch_atomic_configured() {
        assert!(batch, "the workspace configures SQLITE_ENABLE_BATCH_ATOMIC_WRITE but this SQLite lacks it");
    } else {
        eprintln!("note: SQLite built without SQLITE_ENABLE_BATCH_ATOMIC_WRITE: atomic-write ioctls not exercised");
    }
    c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)", []).unwrap();
    // (crash point when COMMIT returned, rows committed by then). Not the CREATE: the
    // first transaction of an empty database goes through a rollback journal, and with
    // synchronous=FULL SQLite does not sync the directory after deleting it (EXTRA does),
    // so until the next commit a crash may bring the journal back and SQLite rolls the
    // CREATE back, as it documents; replay at every I/O finds that window (crash point
    // 25 of 1109 here). The next atomic commit makes the deletion durable (atomic.rs).
    let mut commits: Vec<(u64, i64)> = Vec::new();
    for i in 0..120i64 {
        c.execute(
            "INSERT INTO t (id, v) VALUES (?1, ?2)",
            rusqlite::params![i, "x".repeat(300 + (i as usize % 7) * 100)],
        )
        .unwrap();
        if i % 10 == 9 {
            c.execute("UPDATE t SET v = v || 'u' WHERE id % 3 = 0", []).unwrap();
        }
        commits.push((log_point(&log), i + 1));
    }
    drop(c);
    let stats = mount_stats(&db);
    let atomic_commits = stats
        .split("\"atomic_commits\":")
        .nth(1)
        .map(|s| s.chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse::<u64>().unwrap())
        .unwrap();
    eprintln!("sqlite: 130 transactions, driver stats: {stats}");
    if batch {
        assert!(atomic_commits >= 100, "transactions did not go through the atomic-write ioctls: {stats}");
    }
    assert!(m.unmount().success());
    img.assert_fsck_clean();
    let m = img.mount();
    assert_eq!(integrity_and_count(&m.path("test.db")), Some(120));
    assert!(m.unmount().success());

    // Replayed crashes: states at every kind of I/O, sampled (every one would be
    // thousands of mounts).
    let out = img.dir.path().join("crash.img");
    let states = for_each_crash_state(&log, &out, 300, 31, |cut, what| {
        let must = commits.iter().filter(|(at, _)| *at <= cut).map(|(_, rows)| *rows).max();
        let m = Mount::try_new(&out, &[]).unwrap_or_else(|e| panic!("{what}: mount failed: {e}"));
        let db = m.path("test.db");
        let rows = if db.exists() { integrity_and_count(&db) } else { None };
        assert!(rows >= must, "{what}: {rows:?} rows, but {must:?} had committed");
        assert!(m.unmount().success(), "{what}: unmount");
        let o = rollfs([OsStr::new("fsck"), out.as_os_str()]);
        assert_eq!(o.status.code(), Some(0), "{what}: fsck: {}{}", stdout(&o), stderr(&o));
    });
    eprintln!("sqlite: {states} crash states checked over {} I/Os", log_point(&log));
    assert!(states >= 90, "only {states} distinct crash states");
}

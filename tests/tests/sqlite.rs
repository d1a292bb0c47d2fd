//! SQLite on a rollfs mount: transactions in rollback-journal (DELETE) mode with
//! synchronous=FULL (see `open`) commit through the f2fs atomic-write ioctls when SQLite is built with
//! SQLITE_ENABLE_BATCH_ATOMIC_WRITE (the workspace's .cargo/config.toml does that); the
//! database passes `PRAGMA integrity_check` after a clean remount and after replayed
//! crashes, and keeps every transaction whose COMMIT had returned.

use rollfs::record::WriteLog;
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
    // (log length when COMMIT returned, rows committed by then)
    let mut commits: Vec<(usize, i64)> = vec![(WriteLog::open(&log).unwrap().entries.len(), 0)];
    for i in 0..120i64 {
        c.execute(
            "INSERT INTO t (id, v) VALUES (?1, ?2)",
            rusqlite::params![i, "x".repeat(300 + (i as usize % 7) * 100)],
        )
        .unwrap();
        if i % 10 == 9 {
            c.execute("UPDATE t SET v = v || 'u' WHERE id % 3 = 0", []).unwrap();
        }
        commits.push((WriteLog::open(&log).unwrap().entries.len(), i + 1));
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

    // Replayed crashes: sampled flushes (every one would be hundreds of mounts).
    let wl = WriteLog::open(&log).unwrap();
    let total = wl.flush_count();
    let out = img.dir.path().join("crash.img");
    let points: Vec<u64> = (0..=24).map(|k| k * total / 24).collect();
    for (j, &n) in points.iter().enumerate() {
        let cut = wl.cut_after_flush(n).unwrap();
        let must = commits.iter().filter(|(at, _)| *at <= cut).map(|(_, rows)| *rows).max();
        let seed = (j as u64 + 1) * 31;
        replay_power_cut(&log, &out, Some(n), Some(seed));
        let m = Mount::try_new(&out, &[]).unwrap_or_else(|e| panic!("crash at flush {n}/{total}: mount failed: {e}"));
        let db = m.path("test.db");
        let rows = if db.exists() { integrity_and_count(&db) } else { None };
        assert!(rows >= must, "crash at flush {n}/{total}: {rows:?} rows, but {must:?} had committed");
        assert!(m.unmount().success(), "crash at flush {n}/{total}: unmount");
        let o = rollfs([OsStr::new("fsck"), out.as_os_str()]);
        assert_eq!(o.status.code(), Some(0), "crash at flush {n}/{total}: fsck: {}{}", stdout(&o), stderr(&o));
    }
}

//! An SQLite load for `rollfs crashtest` (tests/tests/crashtest.rs):
//!
//! - `sqlite-load run N`: in the current directory, creates `test.db` (rollback journal,
//!   synchronous=FULL: on rollfs its transactions commit through the f2fs atomic-write
//!   ioctls), then N transactions, each inserting one row (every tenth also updating a
//!   third of the rows); after the CREATE and after every COMMIT, `rollfs mark`.
//! - `sqlite-load check`: inside a recovered crash image, `PRAGMA integrity_check` is ok
//!   and the table holds at least every transaction whose mark preceded the crash
//!   (`ROLLFS_CRASHTEST_MARKS`; mark 1 is the CREATE, mark k + 1 the k-th COMMIT).

use rusqlite::Connection;
use std::path::Path;
use std::process::ExitCode;

fn open() -> rusqlite::Result<Connection> {
    let c = Connection::open("test.db")?;
    c.pragma_update(None, "journal_mode", "DELETE")?;
    c.pragma_update(None, "synchronous", "EXTRA")?;
    Ok(c)
}

fn mark() -> Result<(), String> {
    rollfs::crashtest::mark(Path::new(".")).map(|_| ()).map_err(|e| e.to_string())
}

fn run(n: u64) -> Result<(), String> {
    let c = open().map_err(|e| e.to_string())?;
    c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)", []).map_err(|e| e.to_string())?;
    mark()?;
    for i in 0..n {
        c.execute(
            "INSERT INTO t (id, v) VALUES (?1, ?2)",
            rusqlite::params![i, "x".repeat(300 + (i as usize % 7) * 100)],
        )
        .map_err(|e| e.to_string())?;
        if i % 10 == 9 {
            c.execute("UPDATE t SET v = v || 'u' WHERE id % 3 = 0", []).map_err(|e| e.to_string())?;
        }
        mark()?;
    }
    Ok(())
}

fn check() -> Result<(), String> {
    let marks: u64 = std::env::var("ROLLFS_CRASHTEST_MARKS").ok().and_then(|m| m.parse().ok()).unwrap_or(0);
    if !Path::new("test.db").exists() {
        return if marks == 0 { Ok(()) } else { Err(format!("test.db missing after {marks} marks")) };
    }
    let c = open().map_err(|e| format!("cannot open test.db: {e}"))?;
    let ok: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0)).map_err(|e| e.to_string())?;
    if ok != "ok" {
        return Err(format!("integrity_check: {ok}"));
    }
    let rows: u64 = match c.query_row("SELECT count(*) FROM t", [], |r| r.get(0)) {
        Ok(n) => n,
        Err(e) if marks == 0 && e.to_string().contains("no such table") => return Ok(()),
        Err(e) => return Err(format!("after {marks} marks: {e}")),
    };
    let committed = marks.saturating_sub(1);
    if rows < committed {
        return Err(format!("{rows} rows, but {committed} transactions had committed ({marks} marks)"));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let r = match args.get(1).map(String::as_str) {
        Some("run") => run(args.get(2).and_then(|n| n.parse().ok()).unwrap_or(100)),
        Some("check") => check(),
        _ => Err("usage: sqlite-load run N | check".into()),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sqlite-load: {e}");
            ExitCode::FAILURE
        }
    }
}

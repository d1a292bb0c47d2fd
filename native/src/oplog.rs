//! The operation log of a recorded mount (`mount --record-ops LOG`): the file-system
//! operations a program made, in the order the filesystem applied them, with their data —
//! what `rollfs crashtest --model posix-weak|ext4-ordered` builds its crash states from
//! (models.rs). The write log (record.rs) says what the *device* saw; this says what the
//! *program* asked for.
//!
//! The driver records an operation under the filesystem's lock right after the core
//! applied it successfully (a failed operation changed nothing and is not logged), so the
//! log's order is the order the core applied them. Files are named by a log id, not the
//! inode number: an inode number freed and reused later gets a new id, so that the models
//! never mix two files up. Id 1 is the root directory.
//!
//! Format: JSON lines. The first is the header `{"rollfs_oplog":1,"block_count":N}`; each
//! further line is one [`Op`]; the last is `{"op":"end"}`, written at unmount. A log without
//! it is incomplete (the daemon died, or writing the log failed: from the first failure on
//! nothing more is written) and is refused.
//!
//! Limits (what a recording cannot see in program order): writes through a shared mapping
//! reach the daemon when the kernel writes the pages back, not when the program stored
//! them (they are logged, flagged `mmap`); a multi-threaded program's concurrent
//! operations are logged in the order the daemon served them, one of the orders they could
//! have taken. rollfs mounts have no kernel write-back cache (fuse.rs), so a `write(2)`
//! reaches the daemon, and the log, before it returns.

use crate::error::{CliError, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

pub const OPLOG_VERSION: u32 = 1;
/// The log id of the root directory.
pub const ROOT_ID: u64 = 1;

/// Bytes written as a hex string (JSON has no byte strings).
mod hex {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        let mut out = String::with_capacity(v.len() * 2);
        for b in v {
            out.push_str(&format!("{b:02x}"));
        }
        s.serialize_str(&out)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        if s.len() % 2 != 0 {
            return Err(serde::de::Error::custom("odd-length hex string"));
        }
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|_| serde::de::Error::custom("not hex")))
            .collect()
    }
}

/// What kind of inode a `create` made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// A device node, FIFO or socket (`mknod`): `mode` carries the type bits.
    Special,
}

/// One operation. `id`s are log ids (see the module header), names are bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// create, mkdir, symlink, mknod: a new inode `id` named `name` in `parent`.
    Create {
        parent: u64,
        #[serde(with = "hex")]
        name: Vec<u8>,
        id: u64,
        kind: Kind,
        mode: u32,
        uid: u32,
        gid: u32,
        rdev: u32,
        #[serde(with = "hex")]
        target: Vec<u8>,
    },
    Link {
        id: u64,
        parent: u64,
        #[serde(with = "hex")]
        name: Vec<u8>,
    },
    /// unlink or rmdir of `name` in `parent`, which named `id`.
    Unlink {
        parent: u64,
        #[serde(with = "hex")]
        name: Vec<u8>,
        id: u64,
        dir: bool,
    },
    /// `id` moved from `parent`/`name` to `new_parent`/`new_name`, replacing `replaced`
    /// (with `exchange`: `replaced` moved the other way).
    Rename {
        parent: u64,
        #[serde(with = "hex")]
        name: Vec<u8>,
        new_parent: u64,
        #[serde(with = "hex")]
        new_name: Vec<u8>,
        id: u64,
        replaced: Option<u64>,
        exchange: bool,
    },
    Write {
        id: u64,
        offset: u64,
        #[serde(with = "hex")]
        data: Vec<u8>,
        /// Size of the file before the write.
        old_size: u64,
        /// Written back from a shared mapping (not in program order).
        #[serde(default)]
        mmap: bool,
    },
    /// truncate, or a size grown by fallocate or ZERO_RANGE.
    SetSize {
        id: u64,
        size: u64,
    },
    /// PUNCH_HOLE or ZERO_RANGE of bytes inside the file (its size unchanged).
    Zero {
        id: u64,
        offset: u64,
        len: u64,
    },
    SetAttr {
        id: u64,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
    },
    SetXattr {
        id: u64,
        #[serde(with = "hex")]
        name: Vec<u8>,
        #[serde(with = "hex")]
        value: Vec<u8>,
    },
    RemoveXattr {
        id: u64,
        #[serde(with = "hex")]
        name: Vec<u8>,
    },
    /// fsync or fdatasync (`data_only`) of a file, or of a directory (`dir`).
    Fsync {
        id: u64,
        data_only: bool,
        dir: bool,
    },
    /// The workload's `rollfs mark`.
    Mark,
    /// Something the models have no rules for (an f2fs atomic write): a log with one is
    /// refused by the models.
    Unsupported {
        what: String,
    },
    /// Last line of a complete log.
    End,
}

impl Op {
    /// The inode whose contents or attributes the operation changes (None: a directory
    /// entry operation, fsync, mark).
    pub fn inode_target(&self) -> Option<u64> {
        match self {
            Op::Write { id, .. }
            | Op::SetSize { id, .. }
            | Op::Zero { id, .. }
            | Op::SetAttr { id, .. }
            | Op::SetXattr { id, .. }
            | Op::RemoveXattr { id, .. } => Some(*id),
            _ => None,
        }
    }

    /// The directories whose entries the operation changes.
    pub fn entry_dirs(&self) -> Vec<u64> {
        match self {
            Op::Create { parent, .. } | Op::Link { parent, .. } | Op::Unlink { parent, .. } => vec![*parent],
            Op::Rename { parent, new_parent, .. } if parent == new_parent => vec![*parent],
            Op::Rename { parent, new_parent, .. } => vec![*parent, *new_parent],
            _ => vec![],
        }
    }

    /// Whether it changes the file system at all (not an fsync or a mark).
    pub fn changes(&self) -> bool {
        !matches!(self, Op::Fsync { .. } | Op::Mark | Op::End | Op::Unsupported { .. })
    }
}

#[derive(Serialize, Deserialize)]
struct Header {
    rollfs_oplog: u32,
    block_count: u64,
}

/// The log being written by a recorded mount.
pub struct OpRecorder {
    out: BufWriter<File>,
    /// Inode number → log id of the inode it is now.
    ids: HashMap<u32, u64>,
    next_id: u64,
    /// First failure to write the log: nothing more is written, so the log has no end
    /// line and is refused (never silently incomplete).
    failed: bool,
    marks: u64,
}

pub type SharedOps = Arc<Mutex<OpRecorder>>;

impl OpRecorder {
    pub fn create(path: &Path, block_count: u64, root_ino: u32) -> Result<SharedOps> {
        let f = crate::secure::create_private(path, "create the operation log")?;
        let mut out = BufWriter::new(f);
        let h = serde_json::to_string(&Header { rollfs_oplog: OPLOG_VERSION, block_count }).expect("header");
        writeln!(out, "{h}").map_err(|e| CliError::io(path, "write the operation log", e))?;
        let mut ids = HashMap::new();
        ids.insert(root_ino, ROOT_ID);
        Ok(Arc::new(Mutex::new(OpRecorder { out, ids, next_id: ROOT_ID + 1, failed: false, marks: 0 })))
    }

    /// The log id of inode `ino` (a new one for an inode the log has not seen: one that
    /// existed before the recording began, which a fresh crashtest image does not have).
    pub fn id(&mut self, ino: u32) -> u64 {
        if let Some(&id) = self.ids.get(&ino) {
            return id;
        }
        self.new_id(ino)
    }

    /// A fresh log id for inode `ino`, just created.
    pub fn new_id(&mut self, ino: u32) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.ids.insert(ino, id);
        id
    }

    pub fn log(&mut self, op: &Op) {
        if self.failed {
            return;
        }
        let line = serde_json::to_string(op).expect("an Op serialises");
        self.failed = writeln!(self.out, "{line}").is_err();
    }

    /// Logs a mark (`rollfs mark` on a mount that records only operations); returns how
    /// many marks the log has with it.
    pub fn mark(&mut self) -> u64 {
        self.log(&Op::Mark);
        self.marks += 1;
        self.marks
    }

    /// The end line and the flush, at unmount.
    pub fn finish(&mut self) {
        self.log(&Op::End);
        if !self.failed {
            self.failed = self.out.flush().and_then(|_| self.out.get_ref().sync_all()).is_err();
        }
    }
}

/// A complete operation log, read back.
#[derive(Debug, Clone, PartialEq)]
pub struct OpLog {
    pub block_count: u64,
    /// Without the end line.
    pub ops: Vec<Op>,
}

impl OpLog {
    pub fn open(path: &Path) -> Result<OpLog> {
        let f = File::open(path).map_err(|e| CliError::io(path, "read the operation log", e))?;
        let bad =
            |detail: String| CliError::Failed { path: path.to_owned(), what: "not a complete operation log", detail };
        let mut lines = BufReader::new(f).lines();
        let first = lines
            .next()
            .ok_or_else(|| bad("empty file".into()))?
            .map_err(|e| CliError::io(path, "read the operation log", e))?;
        let h: Header = serde_json::from_str(&first).map_err(|e| bad(format!("header: {e}")))?;
        if h.rollfs_oplog != OPLOG_VERSION {
            return Err(bad(format!("version {} (this rollfs reads {OPLOG_VERSION})", h.rollfs_oplog)));
        }
        let mut ops = Vec::new();
        let mut ended = false;
        for (n, l) in lines.enumerate() {
            let l = l.map_err(|e| CliError::io(path, "read the operation log", e))?;
            if ended {
                return Err(bad(format!("line {}: operations after the end line", n + 2)));
            }
            let op: Op = serde_json::from_str(&l).map_err(|e| bad(format!("line {}: {e}", n + 2)))?;
            if op == Op::End {
                ended = true;
            } else {
                ops.push(op);
            }
        }
        if !ended {
            return Err(bad(
                "no end line: the recording mount did not unmount cleanly, or writing the log failed".into()
            ));
        }
        Ok(OpLog { block_count: h.block_count, ops })
    }

    /// Whether `path` starts like an operation log (and not a write log).
    pub fn is_oplog(path: &Path) -> bool {
        let Ok(f) = File::open(path) else { return false };
        let mut first = String::new();
        let _ = BufReader::new(f).take(64).read_line(&mut first);
        first.starts_with("{\"rollfs_oplog\"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_round_trips_and_an_incomplete_one_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ops.log");
        let rec = OpRecorder::create(&p, 100, 1).unwrap();
        {
            let mut r = rec.lock().unwrap();
            let id = r.new_id(7);
            assert_eq!((id, r.id(1), r.id(7)), (2, ROOT_ID, 2));
            r.log(&Op::Create {
                parent: ROOT_ID,
                name: b"f\n\0".to_vec(),
                id,
                kind: Kind::File,
                mode: 0o644,
                uid: 0,
                gid: 0,
                rdev: 0,
                target: vec![],
            });
            r.log(&Op::Write { id, offset: 3, data: vec![0, 255, 16], old_size: 0, mmap: false });
            r.out.flush().unwrap();
        }
        let e = OpLog::open(&p).unwrap_err().to_string();
        assert!(e.contains("no end line"), "{e}");
        rec.lock().unwrap().finish();
        assert!(OpLog::is_oplog(&p));
        let log = OpLog::open(&p).unwrap();
        assert_eq!(log.block_count, 100);
        assert_eq!(log.ops.len(), 2);
        assert_eq!(log.ops[1], Op::Write { id: 2, offset: 3, data: vec![0, 255, 16], old_size: 0, mmap: false });
        std::fs::write(&p, "{\"rollfs_oplog\":1,\"block_count\":5}\n{\"op\":\"write\"}\n{\"op\":\"end\"}\n").unwrap();
        let e = OpLog::open(&p).unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }
}

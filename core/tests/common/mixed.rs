//! A mixed metadata workload in the manner of xfstests' fsstress (issue 41): many small
//! files, directories, symlinks, xattrs, hard links, renames, truncates, overwrites,
//! fsyncs, fallocate reservations and hole punches, driven straight through the core with
//! a seeded generator until the filesystem is full; then `rm -rf` of everything.
#![allow(dead_code)]

use super::limits::{pattern, C};
use rollfs_core::*;

/// xorshift64*: deterministic, no dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// One name in the tree the workload keeps (hard links are several names of one inode).
#[derive(Clone)]
struct Entry {
    parent: Ino,
    name: String,
    ino: Ino,
    dir: bool,
}

/// What a fill did.
#[derive(Debug, Default, Clone, Copy)]
pub struct FillReport {
    pub ops: u64,
    pub ok: u64,
    pub enospc: u64,
}

/// The generator and its model of the namespace.
pub struct Mixed {
    rng: Rng,
    entries: Vec<Entry>,
    dirs: Vec<Ino>,
    serial: u64,
    /// Whether fallocate (mode 0, KEEP_SIZE) and hole punches are among the operations.
    pub fallocate: bool,
}

impl Mixed {
    pub fn new(seed: u64, fallocate: bool) -> Mixed {
        Mixed { rng: Rng::new(seed), entries: Vec::new(), dirs: vec![1], serial: 0, fallocate }
    }

    fn name(&mut self, prefix: &str) -> String {
        self.serial += 1;
        format!("{prefix}{}", self.serial)
    }

    fn pick_dir(&mut self) -> Ino {
        let i = self.rng.below(self.dirs.len() as u64) as usize;
        self.dirs[i]
    }

    fn pick_file(&mut self) -> Option<Entry> {
        let files: Vec<usize> = (0..self.entries.len()).filter(|&i| !self.entries[i].dir).collect();
        if files.is_empty() {
            return None;
        }
        Some(self.entries[files[self.rng.below(files.len() as u64) as usize]].clone())
    }

    fn pick_entry(&mut self) -> Option<Entry> {
        if self.entries.is_empty() {
            return None;
        }
        Some(self.entries[self.rng.below(self.entries.len() as u64) as usize].clone())
    }

    /// A write's offset and length: mostly the first blocks of a small file, sometimes
    /// far out (a direct or indirect node of its own), sometimes tens of blocks.
    fn extent(&mut self) -> (u64, usize) {
        let off = match self.rng.below(10) {
            0..=5 => self.rng.below(3 * 4096),
            6..=7 => self.rng.below(64) * 4096 + self.rng.below(4096),
            _ => self.rng.below(4096) * 4096,
        };
        let len = match self.rng.below(10) {
            0..=6 => 1 + self.rng.below(6000) as usize,
            7..=8 => 4096 * (1 + self.rng.below(16) as usize),
            _ => 4096 * (16 + self.rng.below(48) as usize),
        };
        (off, len)
    }

    /// Runs `ops` operations. Every result must be success or ENOSPC (or an error the
    /// operation's own arguments explain: a directory moved into itself, a directory not
    /// empty); a refused operation changes nothing, so the model is updated on success only.
    pub fn run<D: BlockDevice>(&mut self, fs: &mut Filesystem<D>, ops: u64, now: Timestamp) -> FillReport {
        let mut rep = FillReport::default();
        for _ in 0..ops {
            rep.ops += 1;
            let r = self.one(fs, now);
            match r {
                Ok(()) => rep.ok += 1,
                Err(Error::NoSpace) => rep.enospc += 1,
                Err(e) => panic!("mixed workload: unexpected error {e}"),
            }
            assert!(!fs.is_read_only(), "the mixed workload turned the filesystem read-only");
        }
        rep
    }

    fn one<D: BlockDevice>(&mut self, fs: &mut Filesystem<D>, now: Timestamp) -> Result<()> {
        match self.rng.below(40) {
            0..=7 => {
                // creat + a first write
                let parent = self.pick_dir();
                let name = self.name("f");
                let a = fs.create(parent, name.as_bytes(), 0o644, C, now)?;
                self.entries.push(Entry { parent, name, ino: a.ino, dir: false });
                let (off, len) = self.extent();
                let len = len.min(3 * 4096);
                let off = off.min(4096);
                fs.write(a.ino, off, &pattern(a.ino, len), now).map(|_| ())
            }
            8..=10 => {
                let parent = self.pick_dir();
                let name = self.name("d");
                let a = fs.mkdir(parent, name.as_bytes(), 0o755, C, now)?;
                self.entries.push(Entry { parent, name, ino: a.ino, dir: true });
                self.dirs.push(a.ino);
                Ok(())
            }
            11..=12 => {
                let parent = self.pick_dir();
                let name = self.name("s");
                let target = "t".repeat(1 + self.rng.below(300) as usize);
                let a = fs.symlink(parent, name.as_bytes(), target.as_bytes(), C, now)?;
                self.entries.push(Entry { parent, name, ino: a.ino, dir: false });
                Ok(())
            }
            13..=17 => {
                let Some(e) = self.pick_file() else { return Ok(()) };
                if fs.getattr(e.ino)?.kind != FileType::Regular {
                    return Ok(());
                }
                let (off, len) = self.extent();
                fs.write(e.ino, off, &pattern(self.serial as u32, len), now).map(|_| ())
            }
            18..=19 => {
                let Some(e) = self.pick_file() else { return Ok(()) };
                if fs.getattr(e.ino)?.kind != FileType::Regular {
                    return Ok(());
                }
                let size = fs.getattr(e.ino)?.size;
                let new =
                    if self.rng.below(3) == 0 { size + self.rng.below(1 << 20) } else { self.rng.below(size + 1) };
                fs.setattr(e.ino, &SetAttr { size: Some(new), ..Default::default() }, now).map(|_| ())
            }
            20..=21 => {
                let Some(e) = self.pick_file() else { return Ok(()) };
                let parent = self.pick_dir();
                let name = self.name("l");
                fs.link(e.ino, parent, name.as_bytes(), now)?;
                self.entries.push(Entry { parent, name, ino: e.ino, dir: false });
                Ok(())
            }
            22..=24 => {
                let Some(e) = self.pick_entry() else { return Ok(()) };
                let parent = self.pick_dir();
                let name = self.name("r");
                match fs.rename(e.parent, e.name.as_bytes(), parent, name.as_bytes(), RenameFlags::empty(), now) {
                    Err(Error::Invalid(_)) if e.dir => return Ok(()),
                    r => r?,
                }
                let i = self.entries.iter().position(|x| x.parent == e.parent && x.name == e.name).unwrap();
                self.entries[i].parent = parent;
                self.entries[i].name = name;
                Ok(())
            }
            25..=26 => {
                let Some(e) = self.pick_entry() else { return Ok(()) };
                if e.dir {
                    match fs.rmdir(e.parent, e.name.as_bytes(), now) {
                        Err(Error::NotEmpty) => return Ok(()),
                        r => r?,
                    }
                    self.dirs.retain(|&d| d != e.ino);
                } else {
                    fs.unlink(e.parent, e.name.as_bytes(), now)?;
                }
                self.entries.retain(|x| !(x.parent == e.parent && x.name == e.name));
                Ok(())
            }
            27..=31 => {
                let Some(e) = self.pick_entry() else { return Ok(()) };
                let name = format!("user.a{}", self.rng.below(8));
                let value = vec![b'v'; 1 + self.rng.below(400) as usize];
                fs.setxattr(e.ino, name.as_bytes(), &value, XattrSetMode::Any, now)
            }
            32 => {
                let Some(e) = self.pick_entry() else { return Ok(()) };
                let name = format!("user.a{}", self.rng.below(8));
                match fs.removexattr(e.ino, name.as_bytes(), now) {
                    Err(Error::NoData) => Ok(()),
                    r => r,
                }
            }
            33 => {
                let Some(e) = self.pick_entry() else { return Ok(()) };
                let set = SetAttr { mode: Some(0o600 + self.rng.below(0o100) as u32), ..Default::default() };
                fs.setattr(e.ino, &set, now).map(|_| ())
            }
            34..=35 => {
                let Some(e) = self.pick_entry() else { return Ok(()) };
                fs.fsync(e.ino, self.rng.below(2) == 0, now)
            }
            36..=37 if self.fallocate => {
                let Some(e) = self.pick_file() else { return Ok(()) };
                if fs.getattr(e.ino)?.kind != FileType::Regular {
                    return Ok(());
                }
                let (off, len) = self.extent();
                if self.rng.below(2) == 0 {
                    fs.fallocate(e.ino, off, len as u64, self.rng.below(2) == 0, now)
                } else {
                    fs.punch_hole(e.ino, off, len as u64, now)
                }
            }
            38 if self.rng.below(8) == 0 => fs.sync(now),
            _ => Ok(()),
        }
    }
}

/// `rm -rf` of everything below the root, as a user would: readdir, unlink or recurse,
/// rmdir. Every removal must succeed; returns how many names were removed.
pub fn remove_all<D: BlockDevice>(fs: &mut Filesystem<D>, dir: Ino, now: Timestamp) -> u64 {
    let mut list = Vec::new();
    fs.readdir(dir, 0, &mut |e| {
        if e.name != b"." && e.name != b".." {
            list.push(e);
        }
        true
    })
    .unwrap();
    let mut removed = 0;
    for e in list {
        let what = String::from_utf8_lossy(&e.name).into_owned();
        if e.kind == FileType::Directory {
            removed += remove_all(fs, e.ino, now);
            fs.rmdir(dir, &e.name, now).unwrap_or_else(|err| panic!("rmdir {what}: {err} ({:?})", fs.stats()));
        } else {
            fs.unlink(dir, &e.name, now).unwrap_or_else(|err| panic!("unlink {what}: {err} ({:?})", fs.stats()));
        }
        removed += 1;
    }
    removed
}

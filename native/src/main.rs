//! The `rollfs` program: argument parsing and exit codes. Also answers as `mount.rollfs`
//! (a symlink to this binary), the helper mount(8) runs for `mount -t rollfs` and fstab.

use clap::{Parser, Subcommand};
use rollfs::cmd::{self, MkfsArgs, MountArgs};
use rollfs::error::{CliError, EXIT_USAGE};
use rollfs::record::ReplayOptions;
use rollfs::size::parse_size;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "rollfs",
    version,
    about = "rollfs: a log-structured filesystem for flash — mkfs, mount (FUSE), fsck, dump, resize, inspect, replay, crashtest"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Create a rollfs filesystem on an image file or block device.
    Mkfs {
        /// Size of the image (e.g. 1G, 512M). Creates the image file if TARGET does not
        /// exist (written out in full unless --sparse); resizes an existing image file.
        #[arg(long, value_parser = parse_size)]
        size: Option<u64>,
        /// Segment size, a power of two from 64K to 2M (default 2M).
        #[arg(long, value_parser = parse_size)]
        segment_size: Option<u64>,
        /// Percent of the main area kept free for segment cleaning (default 5).
        #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u32).range(0..=50))]
        overprovision: Option<u32>,
        /// Volume label (at most 32 bytes).
        #[arg(long, short = 'L')]
        label: Option<String>,
        /// Overwrite an existing filesystem; format a target that another user owns or
        /// can write.
        #[arg(long, short = 'f')]
        force: bool,
        /// Print nothing on success.
        #[arg(long, short = 'q')]
        quiet: bool,
        /// Root reserve in percent of the device (0-50), recorded in the superblock: space
        /// only root (and the mount's resuid/resgid) may fill. Mounts use it unless
        /// `-o reserve=` says otherwise; without it they keep 5 %.
        #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u32).range(0..=50))]
        reserve: Option<u32>,
        /// Create the image file sparse (no space taken until written) instead of writing
        /// it out in full: smaller, but the host then allocates inside rollfs's fsyncs.
        #[arg(long)]
        sparse: bool,
        /// Features, comma-separated: `nodatasum` turns off the CRC32C kept beside every
        /// data block (default `datasum`: a read of a corrupted block gets EIO instead of
        /// the bytes; see `rollfs scrub`); `nodirv2` makes directories as older rollfs
        /// binaries do, for an image they can mount (default `dirv2`: every directory
        /// hashes names with a key of its own, and a full hash bucket overflows instead of
        /// refusing a name); `noprealloc` keeps fallocate's reservations in memory only, for
        /// an image older binaries can mount (default `prealloc`: they are kept on disk and
        /// survive a remount and a crash); `noinline` gives every file a data block, for an
        /// image older binaries can mount (default `inline`: a file of at most 3,656 bytes
        /// keeps them in its inode); `nonsrec` makes every fsync that needs names durable (a
        /// directory's, a renamed or linked file's) write a checkpoint, for an image older
        /// binaries can mount (default `nsrec`: namespace records in the fsync chain carry
        /// the names, and a directory's fsync writes them with the changed files' data).
        #[arg(short = 'O', value_name = "FEATURES")]
        features: Vec<String>,
        /// Populate the new filesystem with a copy of DIR: files (holes kept), directories,
        /// symlinks, hard links, device nodes, FIFOs and sockets, with modes, owners, times
        /// and extended attributes. Without --size the image is sized from DIR: what it
        /// needs plus 25 %, at least 32M. A --size too small for DIR is refused before
        /// anything is written. The superblocks are written last: an interrupted run leaves
        /// an image that mount and fsck refuse (and a new image file is removed on error).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
        /// Show --root's progress even when stderr is not a terminal.
        #[arg(long, requires = "root")]
        progress: bool,
        /// Room to grow: lay the metadata areas out for a device of MAX (e.g. 4x the
        /// size), so that `rollfs resize` can grow the filesystem in place up to it. Costs
        /// about 0.5 % of MAX in metadata blocks (two SSA blocks per 2 MiB segment, the NAT
        /// and orphan room of MAX). Images made with it need this rollfs or a newer one.
        #[arg(long, value_name = "MAX", value_parser = parse_size)]
        max_size: Option<u64>,
        target: PathBuf,
    },
    /// Mount TARGET at MOUNTPOINT through FUSE (in the background unless --foreground).
    Mount {
        /// Stay in the foreground; unmount cleanly on SIGINT/SIGTERM.
        #[arg(short = 'f', long)]
        foreground: bool,
        /// Mount options, comma-separated: ro, rw, allow_other, direct (O_DIRECT),
        /// [no]discard, threads=N, [no]uring (FUSE over io_uring), writers=N, dirty_max=SIZE, reserve=PCT%|SIZE (root reserve, default 5%),
        /// resuid=UID, resgid=GID, [no]dev, [no]suid, [no]exec, [no]atime, force (as --force).
        #[arg(short = 'o', value_name = "OPTIONS")]
        options: Vec<String>,
        /// Record every device write, wait, flush and discard to LOG (see `replay`).
        #[arg(long, value_name = "LOG")]
        record_writes: Option<PathBuf>,
        /// Record every file-system operation (create, write, rename, fsync, ...) with its
        /// data to LOG, in the order applied (what `crashtest --model` builds states from).
        #[arg(long, value_name = "LOG")]
        record_ops: Option<PathBuf>,
        #[arg(long, hide = true)]
        daemon_child: bool,
        /// Mount a target that another user owns or can write (they could change the
        /// filesystem under the mount).
        #[arg(long)]
        force: bool,
        target: PathBuf,
        mountpoint: PathBuf,
    },
    /// Check a filesystem: its metadata, and every data block against its checksum.
    /// Exit: 0 clean, 1 fixed, 4 errors left (or bad data blocks), 8 operational error.
    Fsck {
        /// Repair what the check finds: rebuild NAT, SIT and SSA from the tree reachable
        /// from the root, drop what cannot be read (reported per block), link unreachable
        /// files into /lost+found, write a fresh checkpoint, then check again.
        #[arg(long, short = 'y', alias = "fix")]
        repair: bool,
        #[arg(long)]
        json: bool,
        /// Check the metadata only (faster: skips reading all file data).
        #[arg(long)]
        no_verify_data: bool,
        target: PathBuf,
    },
    /// Read every data block of an unmounted image and check it against its checksum;
    /// list bad blocks by file path. TARGET a mountpoint: the online scrub of the live
    /// mount (node and data blocks, in steps of at most 4 MiB under the filesystem's lock;
    /// the user who mounted it or root). Exit: 0 all good, 4 bad blocks found, 8 could not
    /// scrub.
    Scrub {
        #[arg(long)]
        json: bool,
        /// Online: go on from the cursor NID:POS an interrupted run printed.
        #[arg(long, value_name = "NID:POS", value_parser = rollfs::online_scrub::parse_cursor)]
        resume: Option<rollfs_core::ScrubCursor>,
        /// Online: blocks read per step (1..=1024; the default, 0, is the largest).
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=1024))]
        step_blocks: u32,
        target: PathBuf,
    },
    /// Copy files out of an image without writing to it, also when mount and `fsck
    /// --repair` refuse it: the tree under PATH (default: the root) into DIR, with modes,
    /// owners (as root), times, symlinks, hard links, device nodes and extended attributes;
    /// holes stay holes. It reads what a mount would see (the fsync chain rolled forward in
    /// memory; the last checkpoint alone if that fails). What is damaged is skipped: each
    /// inode, byte range or directory listing not copied is listed on stderr with its block
    /// and the reason (a bad data block is a hole in the copy). Exit: 0 everything copied,
    /// 4 some things not copied, 8 could not dump (image unreadable, PATH not in it, DIR
    /// not new or empty).
    Dump {
        /// The image file or block device (opened read-only).
        image: PathBuf,
        /// Path in the image to copy (a directory's contents, or one file).
        path: Option<PathBuf>,
        /// Directory to copy into: created if missing, else it must be empty.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Print the summary, and every thing not copied, as JSON on stdout.
        #[arg(long)]
        json: bool,
        /// Show progress even when stderr is not a terminal.
        #[arg(long)]
        progress: bool,
    },
    /// Turn on a format 3 part on an existing, cleanly unmounted image: `-O prealloc`
    /// (fallocate's reservations kept on disk), `-O inline` (new small files' bytes in their
    /// inodes), `-O nsrec` (renames, links and new names made durable by fsync through
    /// namespace records in the chain, without a checkpoint), `-O mixed` (a small fsync's
    /// data written beside its nodes, one device range), `-O cpsum` (the summaries of open
    /// segments carried in the checkpoint), as `rollfs mkfs` makes images now.
    /// Older binaries refuse the image afterwards. Exit: 0 done (or nothing to do), 2 bad
    /// options, 1 could not tune (busy, not cleanly unmounted, I/O error).
    Tune {
        /// Features to turn on, comma-separated (`prealloc`, `inline`, `nsrec`, `mixed`,
        /// `cpsum`).
        #[arg(short = 'O', value_name = "FEATURES", required = true)]
        features: Vec<String>,
        target: PathBuf,
    },
    /// Grow a filesystem in place to SIZE (e.g. 4G; default for a block device: its size),
    /// up to the room `mkfs --max-size` gave it: an unmounted image or device, or a
    /// mounted one (TARGET a mountpoint: online, through the daemon; default: the device's
    /// size, or the room for an image file). An image file is extended
    /// (sparse). Crash-safe: a crash at any point leaves the old size or the new one.
    /// Shrinking is refused. Exit: 0 grown (or nothing to do), 2 bad SIZE (smaller than
    /// the filesystem, past its room), 1 could not resize (busy, no room to grow, not
    /// cleanly unmounted, I/O error).
    Resize {
        /// Print the sizes before and after as JSON on stdout.
        #[arg(long)]
        json: bool,
        target: PathBuf,
        #[arg(value_parser = parse_size)]
        size: Option<u64>,
    },
    /// Show the superblock, layout, checkpoint and segment use.
    Inspect {
        #[arg(long)]
        json: bool,
        /// Write an SVG picture of the layout and segment utilisation.
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// Also read every data block and count those that fail their checksum.
        #[arg(long)]
        verify_data: bool,
        target: PathBuf,
    },
    /// Run CMD (in the mount point) on a fresh mount that records its writes (with
    /// --model posix-weak or ext4-ordered: its operations), then check its crash states
    /// (or those the model allows): each must mount, fsck clean and pass --check. Exit: 0
    /// no violation, 1 violations (each printed with a `rollfs replay` reproducer), 2 bad
    /// options, 8 could not run.
    Crashtest {
        /// Size of the fresh image.
        #[arg(long, value_parser = parse_size, default_value = "64M")]
        size: u64,
        /// `mkfs -O` features of the image (e.g. nodatasum).
        #[arg(short = 'O', value_name = "FEATURES")]
        features: Vec<String>,
        /// Crash states to check at most (points right after a mark, flush or wait first).
        #[arg(long, value_name = "N", default_value_t = 2000)]
        max_states: u64,
        /// Seed of the random variants (which unflushed writes survive, torn sectors).
        #[arg(long, value_name = "S", default_value_t = 1)]
        seed: u64,
        /// Random variants per crash point, after the fixed ones (none, all, newest torn).
        #[arg(long, value_name = "N", default_value_t = 2)]
        random_variants: u32,
        /// Surviving writes are never torn (default: torn at 512-byte sectors too).
        #[arg(long)]
        no_torn: bool,
        /// Shell command run inside each recovered mount; must exit 0. It sees
        /// ROLLFS_CRASHTEST_MARKS, the number of `rollfs mark`s the workload had set
        /// before the crash.
        #[arg(long, value_name = "CMD")]
        check: Option<String>,
        /// Work directory (default: a new one under $TMPDIR, removed when all passed).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Keep the work directory (the image, the write log) even when all passed.
        #[arg(long)]
        keep: bool,
        /// Check the crash states of this write log instead of running a command.
        #[arg(long, value_name = "LOG")]
        log: Option<PathBuf>,
        /// Check only the chosen states whose index is K mod N (split one log's states).
        #[arg(long, value_name = "K/N", value_parser = parse_shard)]
        shard: Option<(u64, u64)>,
        /// Seconds a check may run before it is killed (its state is then a violation).
        #[arg(long, value_name = "SECS", default_value_t = 60)]
        check_timeout: u64,
        /// Write the run's summary to FILE (`rollfs-sim merge` merges the shards' files).
        #[arg(long, value_name = "FILE")]
        summary: Option<PathBuf>,
        /// Mount options of the workload's and the checks' mounts (as `mount -o`, e.g.
        /// `uring` to run the workload over the io_uring transport).
        #[arg(short = 'o', value_name = "OPTIONS")]
        mount_options: Vec<String>,
        /// Which crash states: `rollfs` (rollfs's own, from the device writes: the
        /// default), or those a persistence model allows, from the operations the workload
        /// made: `posix-weak` (only what fsync promises) or `ext4-ordered` (ext4,
        /// data=ordered, delayed allocation, auto_da_alloc).
        #[arg(long, value_name = "MODEL", default_value = "rollfs", value_parser = parse_model)]
        model: rollfs::models::Model,
        /// The workload, run in the mount point (after `--`; a program given by a relative
        /// path is found from the current directory).
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Inside a `crashtest` workload: record a mark in the write log of the mount PATH is
    /// on (default: the current directory). A crash after the mark happened after
    /// everything the workload did before it; the check sees the count.
    Mark { path: Option<PathBuf> },
    /// Build an image from a write log as a power loss would leave it.
    Replay {
        log: PathBuf,
        /// Image to write. Without it, print the log's summary (e.g. its flush count).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Power loss right after the N-th flush (0 = before the first).
        #[arg(long, value_name = "N", conflicts_with = "at_io")]
        at_flush: Option<u64>,
        /// Power loss after the first N logged I/Os (crash point N; `crashtest` prints it).
        #[arg(long, value_name = "N")]
        at_io: Option<u64>,
        /// Drop each write not yet made durable with probability 1/2, seeded by SEED
        /// (as `--variant 4 --seed SEED`).
        #[arg(long, value_name = "SEED", conflicts_with_all = ["variant", "seed"])]
        drop_unflushed: Option<u64>,
        /// Which writes not yet durable survive: 0 none, 1 all (the default), 2 with
        /// --torn all with the newest torn to its last sector, higher: a random subset
        /// drawn from --seed (odd ones from 3 on: the device ignored discards).
        #[arg(long, value_name = "V")]
        variant: Option<u32>,
        #[arg(long, value_name = "S", default_value_t = 0)]
        seed: u64,
        /// Surviving writes may be torn at 512-byte sectors (as `crashtest --torn`).
        #[arg(long)]
        torn: bool,
        #[arg(long)]
        json: bool,
        /// LOG is an operation log (`crashtest --model`): build the state that keeps these
        /// ops, `C:LIST` as a model violation prints it (crash after op C; LIST e.g.
        /// `1-3,4p0,5`: ops 1 to 3 and 5 whole, op 4 in part).
        #[arg(long, value_name = "C:LIST", requires = "out", conflicts_with_all = ["at_io", "at_flush", "variant", "drop_unflushed", "torn"])]
        ops: Option<String>,
        /// With --ops: the model the state is under (posix-weak or ext4-ordered).
        #[arg(long, value_name = "MODEL", default_value = "posix-weak", value_parser = parse_model, requires = "ops")]
        model: rollfs::models::Model,
        /// With --ops: `mkfs -O` features of the image (as given to crashtest).
        #[arg(short = 'O', value_name = "FEATURES", requires = "ops")]
        features: Vec<String>,
    },
}

fn parse_model(s: &str) -> Result<rollfs::models::Model, String> {
    rollfs::models::Model::parse(s)
        .ok_or_else(|| format!("{s}: unknown model (known: rollfs, posix-weak, ext4-ordered)"))
}

/// `K/N` with K < N.
fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let (k, n) = s.split_once('/').ok_or("expected K/N, e.g. 0/4")?;
    let (k, n): (u64, u64) = (k.parse().map_err(|_| "K is not a number")?, n.parse().map_err(|_| "N is not a number")?);
    if n == 0 || k >= n {
        return Err(format!("{k}/{n}: K must be below N"));
    }
    Ok((k, n))
}

fn report(r: Result<i32, CliError>) -> i32 {
    match r {
        Ok(c) => c,
        Err(e) => {
            eprintln!("rollfs: {e}");
            e.exit_code()
        }
    }
}

/// `mount.rollfs SOURCE DIR [-sfnv] [-o OPTIONS]`, as mount(8) calls helpers.
fn mount_helper(args: Vec<String>) -> i32 {
    let mut pos = Vec::new();
    let mut options = Vec::new();
    let mut it = args.into_iter().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" => match it.next() {
                Some(o) => options.push(o),
                None => {
                    eprintln!("mount.rollfs: -o needs an argument");
                    return EXIT_USAGE;
                }
            },
            // sloppy, fake, no-mtab, verbose: nothing to do for a FUSE mount.
            "-s" | "-f" | "-n" | "-v" => {}
            s if s.starts_with("-o") => options.push(s[2..].to_string()),
            s if s.starts_with('-') => {
                eprintln!("mount.rollfs: unknown option {s}");
                return EXIT_USAGE;
            }
            _ => pos.push(PathBuf::from(a)),
        }
    }
    if pos.len() != 2 {
        eprintln!("usage: mount.rollfs SOURCE MOUNTPOINT [-o OPTIONS]");
        return EXIT_USAGE;
    }
    let args = MountArgs { options, target: pos[0].clone(), mountpoint: pos[1].clone(), ..Default::default() };
    report(cmd::mount(&args))
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let prog = argv.first().map(|a| a.rsplit('/').next().unwrap_or(a).to_string()).unwrap_or_default();
    if prog == "mount.rollfs" || prog == "mount.fuse.rollfs" {
        std::process::exit(mount_helper(argv));
    }
    let cli = Cli::parse();
    let code = match cli.cmd {
        Cmd::Mkfs {
            size,
            segment_size,
            overprovision,
            label,
            force,
            quiet,
            reserve,
            sparse,
            features,
            root,
            progress,
            max_size,
            target,
        } => report(cmd::mkfs(&MkfsArgs {
            features,
            size,
            segment_size,
            overprovision,
            label,
            force,
            target,
            quiet,
            reserve_pct: reserve,
            sparse,
            root,
            progress,
            max_size,
        })),
        Cmd::Mount { foreground, options, record_writes, record_ops, daemon_child, force, target, mountpoint } => {
            report(cmd::mount(&MountArgs {
                foreground,
                options,
                record_writes,
                record_ops,
                target,
                mountpoint,
                daemon_child,
                force,
            }))
        }
        Cmd::Fsck { repair, json, no_verify_data, target } => {
            cmd::fsck(&target, &cmd::FsckArgs { repair, json, no_verify_data })
        }
        Cmd::Scrub { json, resume, step_blocks, target } => {
            if target.is_dir() {
                let a = rollfs::online_scrub::OnlineScrubArgs { mountpoint: target, json, resume, budget: step_blocks };
                rollfs::online_scrub::run(&a).unwrap_or_else(|(code, e)| {
                    eprintln!("rollfs scrub: {e}");
                    code
                })
            } else if resume.is_some() || step_blocks != 0 {
                eprintln!("rollfs scrub: --resume and --step-blocks are for a mountpoint (the online scrub)");
                rollfs::cmd::FSCK_USAGE
            } else {
                cmd::scrub(&target, json)
            }
        }
        Cmd::Dump { image, path, out, json, progress } => {
            rollfs::dump::run(&rollfs::dump::DumpArgs { image, path, out, json, progress })
        }
        Cmd::Tune { features, target } => report(cmd::tune(&cmd::TuneArgs { features, target })),
        // A directory is a mountpoint: the online grow of the live mount. A path this user
        // cannot reach is said so, not taken for an image (review of issue 39: it was, and
        // the user read "are you root, or in the disk group?").
        Cmd::Resize { json, target, size }
            if target.is_dir()
                || std::fs::symlink_metadata(&target)
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied) =>
        {
            report(rollfs::online_grow::run(&target, size, json))
        }
        Cmd::Resize { json, target, size } => {
            report(rollfs::resize::run(&rollfs::resize::ResizeArgs { target, size, json }))
        }
        Cmd::Inspect { json, svg, verify_data, target } => {
            report(rollfs::inspect::run(&target, json, svg.as_deref(), verify_data))
        }
        Cmd::Crashtest {
            size,
            features,
            max_states,
            seed,
            random_variants,
            no_torn,
            check,
            dir,
            keep,
            log,
            shard,
            check_timeout,
            summary,
            mount_options,
            model,
            command,
        } => rollfs::crashtest::run(&rollfs::crashtest::CrashtestArgs {
            size,
            features,
            max_states,
            seed,
            random_variants,
            torn: !no_torn,
            check,
            dir,
            keep,
            replay_log: log,
            shard: shard.unwrap_or((0, 1)),
            check_timeout_secs: check_timeout,
            summary,
            mount_options,
            model,
            command,
        }),
        Cmd::Mark { path } => {
            report(rollfs::crashtest::mark(path.as_deref().unwrap_or(std::path::Path::new("."))).map(|n| {
                println!("mark {n}");
                0
            }))
        }
        Cmd::Replay { log, out: Some(out), ops: Some(ops), model, features, .. } => {
            report(rollfs::models::replay(&log, &ops, model, &features, &out).map(|()| 0))
        }
        Cmd::Replay { log, out, at_flush, at_io, drop_unflushed, variant, seed, torn, json, .. } => {
            let opts = match drop_unflushed {
                Some(s) => ReplayOptions::drop_unflushed(s),
                None => ReplayOptions { variant, seed, ..Default::default() },
            };
            let opts = ReplayOptions { at_flush, at_io, torn, ..opts };
            report(cmd::replay(&log, out.as_deref(), &opts, json))
        }
    };
    std::process::exit(code);
}

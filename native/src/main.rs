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
    about = "rollfs: a log-structured filesystem for flash — mkfs, mount (FUSE), fsck, inspect, replay"
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
        /// the bytes; see `rollfs scrub`).
        #[arg(short = 'O', value_name = "FEATURES")]
        features: Vec<String>,
        target: PathBuf,
    },
    /// Mount TARGET at MOUNTPOINT through FUSE (in the background unless --foreground).
    Mount {
        /// Stay in the foreground; unmount cleanly on SIGINT/SIGTERM.
        #[arg(short = 'f', long)]
        foreground: bool,
        /// Mount options, comma-separated: ro, rw, allow_other, direct (O_DIRECT),
        /// [no]discard, threads=N, writers=N, dirty_max=SIZE, reserve=PCT%|SIZE (root reserve, default 5%),
        /// resuid=UID, resgid=GID, [no]dev, [no]suid, [no]exec, [no]atime, force (as --force).
        #[arg(short = 'o', value_name = "OPTIONS")]
        options: Vec<String>,
        /// Record every device write, wait, flush and discard to LOG (see `replay`).
        #[arg(long, value_name = "LOG")]
        record_writes: Option<PathBuf>,
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
    /// list bad blocks by file path. Exit: 0 all good, 4 bad blocks found, 8 could not scrub.
    Scrub {
        #[arg(long)]
        json: bool,
        target: PathBuf,
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
    /// Build an image from a write log as a power loss would leave it.
    Replay {
        log: PathBuf,
        /// Image to write. Without it, print the log's summary (e.g. its flush count).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Power loss right after the N-th flush (0 = before the first).
        #[arg(long, value_name = "N")]
        at_flush: Option<u64>,
        /// Drop each write not yet made durable with probability 1/2, seeded by SEED.
        #[arg(long, value_name = "SEED")]
        drop_unflushed: Option<u64>,
        #[arg(long)]
        json: bool,
    },
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
        Cmd::Mkfs { size, segment_size, overprovision, label, force, quiet, reserve, sparse, features, target } => {
            report(cmd::mkfs(&MkfsArgs {
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
            }))
        }
        Cmd::Mount { foreground, options, record_writes, daemon_child, force, target, mountpoint } => {
            report(cmd::mount(&MountArgs {
                foreground,
                options,
                record_writes,
                target,
                mountpoint,
                daemon_child,
                force,
            }))
        }
        Cmd::Fsck { repair, json, no_verify_data, target } => {
            cmd::fsck(&target, &cmd::FsckArgs { repair, json, no_verify_data })
        }
        Cmd::Scrub { json, target } => cmd::scrub(&target, json),
        Cmd::Inspect { json, svg, verify_data, target } => {
            report(rollfs::inspect::run(&target, json, svg.as_deref(), verify_data))
        }
        Cmd::Replay { log, out, at_flush, drop_unflushed, json } => {
            report(cmd::replay(&log, out.as_deref(), &ReplayOptions { at_flush, drop_unflushed }, json))
        }
    };
    std::process::exit(code);
}

//! Namespace records (FORMAT.md, *Record node*; core/src/nsrec.rs): records survive packing
//! into record nodes and decoding, in order and numbered; every damaged or inconsistent
//! record node is refused as corruption naming its block, never a panic; the encoding is
//! canonical (what decodes re-encodes to the same bytes).

use proptest::prelude::*;
use rollfs_core::nsrec::{self, CreateAttrs, NsRecord, RECORD_NODE_HEADER_LEN, RECORD_SYMLINK_TARGET_MAX};
use rollfs_core::{layout::NODE_FOOTER_OFFSET, zero_block, Block, Error, Timestamp};

fn name_strategy() -> impl Strategy<Value = Vec<u8>> {
    // Any byte but '/' and NUL, 1..=255 long, never "." or "..".
    prop::collection::vec(1u8..=255, 1..=255).prop_map(|mut n| {
        for c in n.iter_mut() {
            if *c == b'/' {
                *c = b'_';
            }
        }
        if n == b"." || n == b".." {
            n.push(b'x');
        }
        n
    })
}

fn time_strategy() -> impl Strategy<Value = Timestamp> {
    (any::<i64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Timestamp::new(s, n))
}

fn id() -> impl Strategy<Value = u32> {
    1u32..=u32::MAX
}

fn record_strategy() -> impl Strategy<Value = NsRecord> {
    let create = (id(), name_strategy(), id(), 0u8..7, any::<u16>(), any::<(u32, u32, u32, u32)>(), time_strategy())
        .prop_flat_map(|(dir, name, ino, kind, perm, (uid, gid, rdev, generation), time)| {
            let ty = [0o100000u16, 0o040000, 0o120000, 0o020000, 0o060000, 0o010000, 0o140000][kind as usize];
            let target = if ty == 0o120000 {
                prop::collection::vec(1u8..=255, 1..=RECORD_SYMLINK_TARGET_MAX).boxed()
            } else {
                Just(Vec::new()).boxed()
            };
            (Just((dir, name, ino, ty | (perm & 0o7777), uid, gid, rdev, generation, time)), target, 0u16..16)
        })
        .prop_map(|((dir, name, ino, mode, uid, gid, rdev, generation, time), target, f)| NsRecord::Create {
            dir,
            name,
            ino,
            attrs: CreateAttrs { mode, iflags: f << 1, uid, gid, rdev, generation, target },
            time,
        });
    let link = (id(), name_strategy(), id(), time_strategy()).prop_map(|(dir, name, ino, time)| NsRecord::Link {
        dir,
        name,
        ino,
        time,
    });
    let unlink = (id(), name_strategy(), id(), any::<bool>(), time_strategy())
        .prop_map(|(dir, name, ino, rmdir, time)| NsRecord::Unlink { dir, name, ino, rmdir, time });
    let rename = (id(), name_strategy(), id(), id(), name_strategy(), any::<u32>(), any::<bool>(), time_strategy())
        .prop_map(|(dir, name, ino, dir2, name2, ino2, exchange, time)| NsRecord::Rename {
            dir,
            name,
            ino,
            dir2,
            name2,
            ino2: if exchange { ino2.max(1) } else { ino2 },
            exchange,
            time,
        });
    prop_oneof![create, link, unlink, rename]
}

/// Packs `records` into as many record nodes as they need, numbered from 0.
fn pack_all(records: &[NsRecord]) -> Vec<Box<Block>> {
    let mut nodes = Vec::new();
    let mut done = 0;
    while done < records.len() {
        let mut b = zero_block();
        let n = nsrec::pack(&mut b, &records[done..], done as u32);
        assert!(n > 0, "a record did not fit an empty node");
        done += n;
        nodes.push(b);
    }
    nodes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Records come back from their nodes whole, in order, each node numbered where the
    /// previous one ends; re-packing a decoded node gives the same bytes.
    #[test]
    fn records_round_trip_through_record_nodes(records in prop::collection::vec(record_strategy(), 0..40)) {
        let nodes = pack_all(&records);
        let mut back = Vec::new();
        for (i, b) in nodes.iter().enumerate() {
            prop_assert!(nsrec::is_record_node(b));
            let n = nsrec::decode(b, i as u64).unwrap();
            prop_assert_eq!(n.first_seq as usize, back.len());
            let mut again = zero_block();
            prop_assert_eq!(nsrec::pack(&mut again, &n.records, n.first_seq), n.records.len());
            prop_assert!(again[..] == b[..]);
            back.extend(n.records);
        }
        prop_assert_eq!(back, records);
    }

    /// A record node with any byte of its payload changed decodes to records that re-encode
    /// to exactly its bytes, or is refused as corruption of its block: never a panic, never
    /// a record node whose bytes say something else than its records.
    #[test]
    fn a_changed_byte_is_refused_or_decodes_canonically(
        records in prop::collection::vec(record_strategy(), 1..6),
        at in 0usize..NODE_FOOTER_OFFSET,
        value in any::<u8>(),
    ) {
        let mut b = pack_all(&records).swap_remove(0);
        b[at] = value;
        match nsrec::decode(&b, 4321) {
            Ok(n) => {
                let mut again = zero_block();
                nsrec::pack(&mut again, &n.records, n.first_seq);
                prop_assert!(again[..] == b[..]);
            }
            Err(Error::Corrupt { block, reason }) => {
                prop_assert_eq!(block, 4321);
                prop_assert!(reason.starts_with("record node: "), "{}", reason);
            }
            Err(e) => prop_assert!(false, "not a corruption error: {:?}", e),
        }
    }
}

fn one(r: NsRecord) -> Box<Block> {
    let mut b = zero_block();
    assert_eq!(nsrec::pack(&mut b, &[r], 0), 1);
    b
}

fn link() -> NsRecord {
    NsRecord::Link { dir: 1, name: b"name".to_vec(), ino: 5, time: Timestamp::new(1, 2) }
}

fn refused(b: &Block) -> &'static str {
    match nsrec::decode(b, 7) {
        Err(Error::Corrupt { block: 7, reason }) => reason,
        other => panic!("accepted or wrong error: {other:?}"),
    }
}

/// Each check of the decoder, reached by a node that breaks only it.
#[test]
fn each_inconsistency_is_named() {
    let hdr = RECORD_NODE_HEADER_LEN;
    // Not a record node's footer.
    let mut b = one(link());
    rollfs_core::node::init_footer(&mut b, 3, 3, rollfs_core::node::NodeType::Inode, 0);
    assert_eq!(refused(&b), "record node: footer is not a record node's");
    // No records.
    let mut b = zero_block();
    nsrec::init_record_footer(&mut b);
    assert_eq!(refused(&b), "record node: no records");
    // A count larger than the records there.
    let mut b = one(link());
    b[0] = 2;
    assert_eq!(refused(&b), "record node: a record past the byte count");
    // Bytes after the last record.
    let mut b = one(link());
    b[hdr + 200] = 1;
    assert_eq!(refused(&b), "record node: bytes after the last record");
    // A byte count past the payload.
    let mut b = one(link());
    b[2..4].copy_from_slice(&5000u16.to_le_bytes());
    assert_eq!(refused(&b), "record node: records past the payload");
    // An unknown operation, an unknown flag, a reserved field.
    let mut b = one(link());
    b[hdr] = 9;
    assert_eq!(refused(&b), "record node: unknown operation");
    let mut b = one(link());
    b[hdr + 1] = 1;
    assert_eq!(refused(&b), "record node: unknown flag");
    let mut b = one(link());
    b[hdr + 6] = 1;
    assert_eq!(refused(&b), "record node: reserved field not zero");
    // A name with a slash; "."; inode 0.
    let mut b = one(link());
    b[hdr + 40] = b'/';
    assert_eq!(refused(&b), "record node: a name or symlink target out of range");
    let mut b = one(NsRecord::Link { dir: 1, name: b"ab".to_vec(), ino: 5, time: Timestamp::new(1, 2) });
    b[hdr + 40..hdr + 42].copy_from_slice(b"..");
    assert_eq!(refused(&b), "record node: a name or symlink target out of range");
    let mut b = one(link());
    b[hdr + 8..hdr + 12].fill(0);
    assert_eq!(refused(&b), "record node: a record without its inode or directory");
    // Rename fields in a link; an exchange without its second inode.
    let mut b = one(link());
    b[hdr + 16] = 3;
    assert_eq!(refused(&b), "record node: rename fields in another record");
    let r = NsRecord::Rename {
        dir: 1,
        name: b"a".to_vec(),
        ino: 2,
        dir2: 1,
        name2: b"b".to_vec(),
        ino2: 3,
        exchange: true,
        time: Timestamp::new(0, 0),
    };
    let mut b = one(r);
    b[hdr + 20..hdr + 24].fill(0);
    assert_eq!(refused(&b), "record node: an exchange without its second inode");
    // A symlink create without its target; a regular file with one.
    let attrs =
        CreateAttrs { mode: 0o120777, iflags: 0, uid: 0, gid: 0, rdev: 0, generation: 1, target: b"t".to_vec() };
    let c = |attrs: CreateAttrs| NsRecord::Create {
        dir: 1,
        name: b"s".to_vec(),
        ino: 4,
        attrs,
        time: Timestamp::new(0, 0),
    };
    let mut b = one(c(attrs.clone()));
    b[hdr + 40..hdr + 42].copy_from_slice(&0o100644u16.to_le_bytes());
    assert_eq!(refused(&b), "record node: a name or symlink target out of range");
    let mut b = one(c(CreateAttrs {
        mode: 0o120777,
        iflags: 0,
        uid: 0,
        gid: 0,
        rdev: 0,
        generation: 1,
        target: b"t".to_vec(),
    }));
    b[hdr + 40..hdr + 42].copy_from_slice(&0o170777u16.to_le_bytes());
    assert_eq!(refused(&b), "record node: invalid file type in a create record");
    // Nanoseconds out of range.
    let mut b = one(link());
    b[hdr + 32..hdr + 36].copy_from_slice(&1_000_000_000u32.to_le_bytes());
    assert_eq!(refused(&b), "record node: nanoseconds out of range");
}

/// What no record node can carry is said so, before anything is written: a symlink target
/// past the limit, a name past 255 bytes.
#[test]
fn what_a_record_cannot_carry_is_known_before_writing() {
    let attrs = |n: usize| CreateAttrs {
        mode: 0o120777,
        iflags: 0,
        uid: 0,
        gid: 0,
        rdev: 0,
        generation: 1,
        target: vec![b'x'; n],
    };
    let c = |n: usize| NsRecord::Create {
        dir: 1,
        name: vec![b'n'; 255],
        ino: 2,
        attrs: attrs(n),
        time: Timestamp::new(0, 0),
    };
    assert!(c(RECORD_SYMLINK_TARGET_MAX).expressible());
    assert!(!c(RECORD_SYMLINK_TARGET_MAX + 1).expressible());
    // The largest record fills a node exactly.
    assert_eq!(c(RECORD_SYMLINK_TARGET_MAX).encoded_len(), nsrec::RECORD_NODE_BYTES_MAX);
    let long = NsRecord::Link { dir: 1, name: vec![b'n'; 256], ino: 2, time: Timestamp::new(0, 0) };
    assert!(!long.expressible());
}

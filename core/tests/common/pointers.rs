//! Reading a file's data pointers straight from the node blocks on a device (the data
//! checksum tests check the format, and what cleaning and recovery leave, through it).

use rollfs_core::checkpoint::Checkpoint;
use rollfs_core::layout::*;
use rollfs_core::nat::Nat;
use rollfs_core::node::{self, inode, NodeType};
use rollfs_core::superblock::read_superblock;
use rollfs_core::BlockDevice;
use rollfs_core::*;

/// Every data pointer of inode `ino` on the device: (file block, address, checksum), read
/// from the node blocks by their FORMAT.md layout (not through the core's tree code).
pub fn pointers<D: BlockDevice>(dev: &mut D, ino: Ino) -> Vec<(u64, u32, u32)> {
    let g = read_superblock(dev).unwrap().geometry;
    let (cp, _) = Checkpoint::read_newest(dev, &g).unwrap();
    let nat = Nat::load(dev, &g, cp.nat_slots.clone(), &cp.nat_journal, cp.version).unwrap();
    let mut read = |nid: Nid, ty: NodeType| -> Box<Block> {
        let mut b = zero_block();
        dev.read(nat.get(nid).unwrap().addr as u64, &mut b).unwrap();
        assert_eq!(node::footer_type(&b), Some(ty));
        b
    };
    let ib = read(ino, NodeType::Inode);
    let mut out: Vec<(u64, u32, u32)> = (0..ADDRS_PER_INODE)
        .map(|i| (i as u64, inode::addr(&ib, i), inode::data_crc(&ib, i)))
        .filter(|p| p.1 != NULL_ADDR)
        .collect();
    let mut stack: Vec<(Nid, usize, u64)> = node::SLOT_SUBTREES
        .iter()
        .enumerate()
        .map(|(s, &(base, _, depth))| (inode::nid(&ib, s), depth, base))
        .filter(|e| e.0 != NULL_NID)
        .collect();
    while let Some((nid, depth, base)) = stack.pop() {
        if depth == 0 {
            let b = read(nid, NodeType::Direct);
            for i in 0..ADDRS_PER_BLOCK {
                if node::addr(&b, i) != NULL_ADDR {
                    out.push((base + i as u64, node::addr(&b, i), node::data_crc(&b, i)));
                }
            }
        } else {
            let b = read(nid, NodeType::Indirect);
            for i in 0..NIDS_PER_BLOCK {
                let c = node::slot(&b, i);
                if c != NULL_NID {
                    stack.push((c, depth - 1, base + i as u64 * node::entry_span(depth)));
                }
            }
        }
    }
    out.sort();
    out
}

/// The address of inode `ino`'s block on `dev`, through the NAT of the newest checkpoint.
pub fn inode_addr<D: BlockDevice>(dev: &mut D, ino: Ino) -> u64 {
    let g = read_superblock(dev).unwrap().geometry;
    let (cp, _) = Checkpoint::read_newest(dev, &g).unwrap();
    let nat = Nat::load(dev, &g, cp.nat_slots.clone(), &cp.nat_journal, cp.version).unwrap();
    nat.get(ino).unwrap().addr as u64
}

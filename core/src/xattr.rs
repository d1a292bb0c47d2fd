//! Extended attributes: all of an inode's xattrs live in one xattr node block.
//!
//! Layout of the node payload (bytes 0..4064): a sequence of entries
//! `name_len u8 | value_len u16 | name | value`, ended by a zero `name_len` or the end of
//! the payload. Names are 1..=255 bytes, unique, and kept sorted so that list order is
//! deterministic. An inode without xattrs has no xattr node (the fast path: nothing to
//! read or write).

use crate::error::{Error, Result};
use crate::layout::NODE_FOOTER_OFFSET;
use crate::Block;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

pub const XATTR_ENTRY_HEADER: usize = 3;
pub const XATTR_PAYLOAD: usize = NODE_FOOTER_OFFSET;
pub const XATTR_NAME_MAX: usize = 255;
/// Largest single value: a lone entry with a one-byte name must fit the payload.
pub const XATTR_VALUE_MAX: usize = XATTR_PAYLOAD - XATTR_ENTRY_HEADER - 1;

pub type XattrMap = BTreeMap<Vec<u8>, Vec<u8>>;

/// Decodes the xattr node read from `addr`.
pub fn decode(b: &Block, addr: u64) -> Result<XattrMap> {
    let mut m = XattrMap::new();
    let mut pos = 0usize;
    // Bounded: every entry consumes at least XATTR_ENTRY_HEADER + 1 bytes.
    while pos + XATTR_ENTRY_HEADER <= XATTR_PAYLOAD {
        let nl = b[pos] as usize;
        if nl == 0 {
            return Ok(m);
        }
        let vl = u16::from_le_bytes([b[pos + 1], b[pos + 2]]) as usize;
        let end = pos + XATTR_ENTRY_HEADER + nl + vl;
        if end > XATTR_PAYLOAD {
            return Err(Error::corrupt(addr, "xattr: entry runs past the block"));
        }
        let name = b[pos + 3..pos + 3 + nl].to_vec();
        let value = b[pos + 3 + nl..end].to_vec();
        if m.insert(name, value).is_some() {
            return Err(Error::corrupt(addr, "xattr: duplicate name"));
        }
        pos = end;
    }
    Ok(m)
}

/// Bytes `m` needs in the payload.
pub fn encoded_len(m: &XattrMap) -> usize {
    m.iter().map(|(k, v)| XATTR_ENTRY_HEADER + k.len() + v.len()).sum()
}

/// Encodes into the payload of `b` (the footer is left alone). Fails with ENOSPC if the set
/// does not fit one node, as on filesystems with a per-inode xattr limit.
pub fn encode(m: &XattrMap, b: &mut Block) -> Result<()> {
    if encoded_len(m) > XATTR_PAYLOAD {
        return Err(Error::NoSpace);
    }
    b[..XATTR_PAYLOAD].fill(0);
    let mut pos = 0;
    for (k, v) in m {
        b[pos] = k.len() as u8;
        b[pos + 1..pos + 3].copy_from_slice(&(v.len() as u16).to_le_bytes());
        b[pos + 3..pos + 3 + k.len()].copy_from_slice(k);
        b[pos + 3 + k.len()..pos + 3 + k.len() + v.len()].copy_from_slice(v);
        pos += XATTR_ENTRY_HEADER + k.len() + v.len();
    }
    Ok(())
}

/// Checks a name and value given by a caller.
pub fn check_args(name: &[u8], value_len: usize) -> Result<()> {
    if name.is_empty() || name.contains(&0) {
        return Err(Error::Invalid("xattr name empty or contains NUL"));
    }
    if name.len() > XATTR_NAME_MAX {
        return Err(Error::Range);
    }
    if value_len > XATTR_VALUE_MAX {
        return Err(Error::NoSpace);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zero_block;

    #[test]
    fn round_trip_and_corruption() {
        let mut m = XattrMap::new();
        m.insert(b"user.a".to_vec(), b"1".to_vec());
        m.insert(b"user.bb".to_vec(), alloc::vec![7u8; 1000]);
        let mut b = zero_block();
        encode(&m, &mut b).unwrap();
        assert_eq!(decode(&b, 0).unwrap(), m);
        // An entry claiming to run past the payload is corruption, not a panic.
        b[1] = 0xff;
        b[2] = 0xff;
        assert!(matches!(decode(&b, 9), Err(Error::Corrupt { block: 9, .. })));
        // Arbitrary bytes never panic.
        let mut g = zero_block();
        for i in 0..g.len() {
            g[i] = (i * 31 % 251) as u8;
        }
        let _ = decode(&g, 0);
    }

    #[test]
    fn too_large_is_enospc() {
        let mut m = XattrMap::new();
        for i in 0..5u8 {
            m.insert(alloc::vec![b'a', i], alloc::vec![0u8; 1000]);
        }
        let mut b = zero_block();
        assert_eq!(encode(&m, &mut b), Err(Error::NoSpace));
    }
}

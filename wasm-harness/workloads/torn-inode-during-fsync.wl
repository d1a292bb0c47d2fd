# mutant-recovery-no-crc: a torn inode write during fsync. Metadata-only fsyncs (chmod,
# truncate: no data blocks, so the batch's data checksum has nothing to verify) whose
# inode write is torn so that only its last sector (the footer: nid, fsync mark,
# checkpoint version) reaches the media over an old (zeroed) body. Only the node CRC
# tells: recovery must stop at that block (the file as at the sync), never apply it.
@seed 13
@completion random2
@discard ignore
create /f
write /f 0 8192 1
sync
chmod /f 600
fsync /f
truncate /f 100
fsync /f
setxattr /f user.k v1
fsync /f

# Review 50, F1: a directory fsync whose group is a rename record and the rider batch of
# /a/f (its xattr node, then its inode). A crash loses the xattr node; the first recovery
# writes its own first node into that place (the chain's version, naming the next block),
# and a crash during it lets the next walk cross the gap: the group looked complete and the
# rename applied without the xattr change. Recovery writes in a fresh segment now
# (segment.rs, `pin_and_advance`); `mutant-recovery-writes-at-the-gap` is caught here.
# The seed picks a completion order that loses the xattr node and keeps the inode; the order
# follows every device request of the run, so a change in what a mount reads or writes can
# move it (stop 53: seed 7 -> 9). Re-pick it with
# `rollfs-sim mutants --only mutant-recovery-writes-at-the-gap --cases 0`.
@seed 9
@completion random3
@nsrec
mkdir /a
mkdir /a/c
sync
create /a/f
write /a/f 0 100 1
fsync /a
setxattr /a/f user.x v25
rename /a/f /a/c/g
fsync /

# Data beside its chain with several nodes in the batch: an xattr node, direct nodes far
# into the file (offsets past the inode's pointers, each block in its own direct node),
# new files whose fsync restores the name (dentry mark without records, create records
# with them), batches of up to 16 blocks over up to 16 direct nodes meeting the ends of
# 16-block segments. (review 53)
@seed 536
@device 4096 16
@nonsrec
mkdir /d
create /d/a
sync
create /d/n0
setxattr /d/n0 user.k0 v0
write /d/n0 3743744 4096 1
fsync /d/n0
write /d/a 7909376 4096 2
write /d/a 12070912 4096 3
write /d/a 0 8192 4
fsync /d/a
setxattr /d/a user.k2 v2
write /d/a 12075008 4096 5
write /d/a 16236544 4096 6
write /d/a 20398080 4096 7
fsync /d/a
create /d/n3
write /d/n3 16240640 4096 8
write /d/n3 20402176 4096 9
write /d/n3 24563712 4096 10
write /d/n3 28725248 4096 11
fsync /d/n3
setxattr /d/a user.k4 v4
write /d/a 20406272 4096 12
fdatasync /d/a
write /d/a 24551424 4096 13
write /d/a 28712960 4096 14
write /d/a 0 24576 15
fsync /d/a
create /d/n6
setxattr /d/n6 user.k6 v6
write /d/n6 28717056 4096 16
write /d/n6 32878592 4096 17
write /d/n6 37040128 4096 18
fsync /d/n6
write /d/a 32882688 4096 19
write /d/a 37044224 4096 20
write /d/a 41205760 4096 21
write /d/a 45367296 4096 22
fsync /d/a
setxattr /d/a user.k8 v8
write /d/a 37048320 4096 23
fsync /d/a
create /d/n9
write /d/n9 41213952 4096 24
write /d/n9 45375488 4096 25
write /d/n9 0 12288 26
fdatasync /d/n9
setxattr /d/a user.k10 v10
write /d/a 45359104 4096 27
write /d/a 49520640 4096 28
write /d/a 53682176 4096 29
fsync /d/a
write /d/a 49524736 4096 30
write /d/a 53686272 4096 31
write /d/a 57847808 4096 32
write /d/a 62009344 4096 33
fsync /d/a

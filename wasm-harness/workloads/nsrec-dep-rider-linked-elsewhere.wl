# Stop 58 (review 56, second user, F1): records are written by dependency. A file renamed over
# a name in /tmp (a rider of any fsync writing /tmp's records) is then linked into /e; root's
# fsync of a new file in /tmp writes /tmp's records, the rider's batch, and the rider's link:
# its batch carries two links, which the recovered tree must match (fsck). Catches
# mutant-records-without-riders-own.
@nsrec
@seed 59
mkdir /tmp
mkdir /e
create /tmp/u
write /tmp/u 0 4096 1
sync
create /tmp/v
write /tmp/v 0 8192 6
rename /tmp/v /tmp/u
link /tmp/u /e/u2
create /tmp/db
write /tmp/db 0 4096 3
fsync /tmp/db

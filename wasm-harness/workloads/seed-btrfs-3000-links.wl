# Scenario "thousands of links" (docs/INVARIANTS.md; btrfs fstests generic/041 and the log_dir_items soft lockup): a file with
# 3,000 hard links in one directory, made durable by sync; then one link is removed, a
# new name added and the removed name re-added (generic/041's steps), the file written,
# and fsync'd. fsync must finish in bounded time and memory (rollfs falls back to a
# checkpoint for a file whose links changed, writing the whole big directory), and every
# crash state must recover: the fsync'd data under every name, link count and dentries
# consistent (fsck).
@seed 41
mkdir /d
create /d/f
write /d/f 0 5000 1
repeat 3000 link /d/f /d/l{i}
sync
unlink /d/l1
link /d/f /d/l3001
link /d/f /d/l1
write /d/f 0 100 2
fsync /d/f

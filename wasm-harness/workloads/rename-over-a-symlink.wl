# A rename over a name that existed at the checkpoint as a symlink: a crash before the
# rename is durable recovers both names (the checkpoint's state), which the per-file rename
# rule took for a non-atomic rename (an oracle false positive, found by
# `rollfs-sim explore --seed 31317 --duration 1800 --workload all --torn --eio` in random:670,
# shrunk from 29 operations). The rule now skips renames whose new name existed.
@seed 1403195241828734019
@completion random3
mkdir /a
mkdir /a/c
symlink /a/h target
create /a/c/h
rename /a/h /i noreplace
sync
rename /a/c/h /i

# Overwrites that fill most of an 8 MiB image, so that segment cleaning must move live
# blocks (and update their SSA owners) between checkpoints.
@seed 6
create /big
write /big 0 2097152 1
create /small
write /small 0 9000 2
sync
write /big 0 2097152 3
sync
write /big 0 2097152 4
sync
write /big 1048576 1048576 5
unlink /small
sync
write /big 0 2097152 6
sync

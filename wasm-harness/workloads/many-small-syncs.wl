# Many checkpoints in a row on a small image: exercises checkpoint pack alternation and
# segment reuse after checkpoints free blocks.
@seed 5
create /f
write /f 0 8192 1
sync
write /f 0 8192 2
sync
write /f 0 8192 3
sync
write /f 0 8192 4
sync
write /f 0 8192 5
sync
write /f 0 8192 6
sync
write /f 0 8192 7
sync
write /f 0 8192 8
sync

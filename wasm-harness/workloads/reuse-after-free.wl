# Segments freed since the last checkpoint must not be reused before the checkpoint that
# frees them is durable: fill the device so the round-robin allocator wraps onto them.
@seed 7
create /a
write /a 0 1048576 1
sync
create /b
write /b 0 4194304 2
sync
unlink /a
create /c
write /c 0 1048576 3
sync

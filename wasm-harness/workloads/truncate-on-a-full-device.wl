# A truncation into the middle of a block on a full device (issue 13, scenario 5): the new
# last block's tail must be zeroed, so the room to rewrite it is reserved before any block
# is freed. mutant-truncate-free-before-reserve (free first, then look for room) leaves the
# old size over a freed block at a crash: tree-mismatch. Shrunk by rollfs-sim (69 ops -> 7)
# from the full family fill-churn, whose random draws no longer reach it since the
# explorer's fallocate operations changed the random streams.
@seed 11335484387270621079
@completion random3
@discard ignore
@device min+64 16
mkdir /d
create /d/f2
write /d/f2 0 9000 3
create /fill
fill /fill 65536 100 0
fill /fill 4096 200 64
truncate /d/f2 4095

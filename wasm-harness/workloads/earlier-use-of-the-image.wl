# The device held an earlier use of the same image (the crash review of issue 39, F1): a
# card flashed with an image, used, then flashed again with the same image. Blocks the
# image file never had (a grown region, or what bmaptool skips) keep the earlier use's
# chain: same UUID, same checkpoint history. The earlier use ran these operations with
# other data; a crash state of this use that shows any of it rolled forward the earlier
# use's fsyncs (invariant 6). Each mount's version jump keeps the chains apart; mutant
# `mutant-mount-no-version-jump` steps by 1 and is caught here.
@earlier-life
create /a
write /a 0 6000 1
fsync /a
write /a 0 6000 2
fsync /a
mkdir /d
create /d/b
write /d/b 0 9000 3
fsync /d/b
write /a 8192 4096 4
fsync /a
sync
write /d/b 0 100 5
fsync /d/b
write /a 0 100 6
fsync /a

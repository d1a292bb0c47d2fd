# Inline data review (issue 38): crash states of an inline file's whole life without a
# checkpoint between its steps: created and fsync'd (a batch that is the inode alone, with
# the dentry mark: roll-forward recreates it inline), rewritten at the same size and
# fdatasync'd, shrunk and extended (zeros), converted by a far write and fsync'd (a
# non-inline batch over an inline inode of the chain), truncated back under the limit and
# fsync'd (never back inline); a second file recreated inline then converted in the same
# chain; an open-unlinked inline file; a rename over an inline file; links made and
# removed.
@seed 77
mkdir /d
create /d/keep
write /d/keep 0 100 1
sync
create /d/a
write /d/a 0 2000 2
fsync /d/a
write /d/a 500 100 3
fdatasync /d/a
truncate /d/a 7
truncate /d/a 3000
fdatasync /d/a
write /d/a 3000 656 4
fsync /d/a
write /d/a 9000 100 5
fsync /d/a
truncate /d/a 5
fsync /d/a
truncate /d/a 3000
fsync /d/a
create /d/b
write /d/b 0 3656 6
fsync /d/b
zero /d/b 100 50 keep
fsync /d/b
create /d/c
open /d/c
write /d/c 0 1000 7
fsync /d/c
unlink /d/c
write /d/c 0 3000 8
fsync /d/c
close /d/c
create /d/x
write /d/x 0 800 9
fsync /d/x
create /d/y
write /d/y 0 900 10
rename /d/y /d/x
fsync /d/x
link /d/keep /d/l
write /d/keep 0 50 11
unlink /d/l
fsync /d/keep
write /d/keep 40 20 12
fdatasync /d/keep

# review49: a big directory (4000 long names: deep levels, full buckets, overflow) with
# records: names removed and added, renames in and out, hard links, then fsyncs of files
# and of the directory, no checkpoint between.
@seed 52
@nsrec
mkdir /d
mkdir /e
create /d/f
write /d/f 0 5000 1
repeat 1200 create /d/NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN{i}
sync
repeat 300 unlink /d/NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN{i}
repeat 200 rename /d/NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN{i}0 /e/m{i}
create /d/new
write /d/new 0 700 2
fsync /d/new
repeat 400 link /d/f /d/h{i}
repeat 300 rename /e/m{i} /d/NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNx{i}
fsync /d
create /e/last
write /e/last 0 100 3
fsync /e/last

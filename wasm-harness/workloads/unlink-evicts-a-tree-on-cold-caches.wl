# The I/O-error mutant's own case (mutant-eio-change-before-read): an unlink that evicts a
# file with direct and indirect nodes, and a rename over one, on cold caches. Every node
# the eviction frees must be read before the operation's first change, so that a read
# that fails leaves the name and the file as they were. Few I/O points, so that the
# mutant check's sweep (12 points per workload) reaches the eviction's reads; the
# regression sweeps with more points found it in reuse-wrap-before-cp.wl (read 24).
@seed 9
mkdir /d
create /d/f
write /d/f 0 4096 1
write /d/f 8388608 4096 2
create /d/g
write /d/g 4194304 4096 3
create /d/h
sync
unlink /d/f
rename /d/h /d/g

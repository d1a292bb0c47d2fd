# Shrunk by rollfs-sim from file:/work/main/wasm-harness/workloads/earlier-use-of-the-image.wl (16 ops -> 2): recovery-crash-tree-mismatch
# original: rollfs-sim replay --seed 0 --case file:/work/main/wasm-harness/workloads/earlier-use-of-the-image.wl --state 17:0/19:1 --mutant mutant-mount-no-version-jump
# earlier-use-of-the-image-shrunk
@seed 10730544302103139626
@completion random3
@earlier-life
create /a
fsync /a

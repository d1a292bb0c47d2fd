# A rename between directories must be atomic across a checkpoint: old name or new, never both.
@seed 1
mkdir /a
mkdir /b
create /a/f
write /a/f 0 5000 7
sync
rename /a/f /b/g
sync
rename /b/g /a/f exchange
create /b/g
rename /a/f /b/g
sync

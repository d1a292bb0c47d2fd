# mutant-gc-no-ssa: two files written interleaved share every segment; rewriting one
# of them until space runs out makes segment cleaning move the other's live blocks; the
# sync persists their summaries (SSA), which fsck checks after every later crash.
@seed 9
@completion random2
create /x
create /y
write /x 0 32768 1
write /y 0 32768 2
write /x 32768 32768 1
write /y 32768 32768 2
write /x 65536 32768 1
write /y 65536 32768 2
write /x 98304 32768 1
write /y 98304 32768 2
write /x 131072 32768 1
write /y 131072 32768 2
write /x 163840 32768 1
write /y 163840 32768 2
write /x 196608 32768 1
write /y 196608 32768 2
write /x 229376 32768 1
write /y 229376 32768 2
write /x 262144 32768 1
write /y 262144 32768 2
write /x 294912 32768 1
write /y 294912 32768 2
write /x 327680 32768 1
write /y 327680 32768 2
write /x 360448 32768 1
write /y 360448 32768 2
write /x 393216 32768 1
write /y 393216 32768 2
write /x 425984 32768 1
write /y 425984 32768 2
write /x 458752 32768 1
write /y 458752 32768 2
write /x 491520 32768 1
write /y 491520 32768 2
write /x 524288 32768 1
write /y 524288 32768 2
write /x 557056 32768 1
write /y 557056 32768 2
write /x 589824 32768 1
write /y 589824 32768 2
write /x 622592 32768 1
write /y 622592 32768 2
write /x 655360 32768 1
write /y 655360 32768 2
write /x 688128 32768 1
write /y 688128 32768 2
write /x 720896 32768 1
write /y 720896 32768 2
write /x 753664 32768 1
write /y 753664 32768 2
write /x 786432 32768 1
write /y 786432 32768 2
write /x 819200 32768 1
write /y 819200 32768 2
write /x 851968 32768 1
write /y 851968 32768 2
write /x 884736 32768 1
write /y 884736 32768 2
write /x 917504 32768 1
write /y 917504 32768 2
write /x 950272 32768 1
write /y 950272 32768 2
write /x 983040 32768 1
write /y 983040 32768 2
write /x 1015808 32768 1
write /y 1015808 32768 2
write /x 1048576 32768 1
write /y 1048576 32768 2
write /x 1081344 32768 1
write /y 1081344 32768 2
write /x 1114112 32768 1
write /y 1114112 32768 2
write /x 1146880 32768 1
write /y 1146880 32768 2
write /x 1179648 32768 1
write /y 1179648 32768 2
write /x 1212416 32768 1
write /y 1212416 32768 2
write /x 1245184 32768 1
write /y 1245184 32768 2
write /x 1277952 32768 1
write /y 1277952 32768 2
write /x 1310720 32768 1
write /y 1310720 32768 2
write /x 1343488 32768 1
write /y 1343488 32768 2
write /x 1376256 32768 1
write /y 1376256 32768 2
write /x 1409024 32768 1
write /y 1409024 32768 2
write /x 1441792 32768 1
write /y 1441792 32768 2
write /x 1474560 32768 1
write /y 1474560 32768 2
write /x 1507328 32768 1
write /y 1507328 32768 2
write /x 1540096 32768 1
write /y 1540096 32768 2
sync
write /x 0 1572864 3
sync
write /x 0 1572864 4
sync
write /x 0 1572864 5
sync
write /x 0 1572864 6
sync
write /y 0 4096 9
fsync /y

# Data beside its chain churning a small device: a few small files overwritten and
# fsync'd over and over, so that node segments fill with freed data copies that only
# cleaning reclaims (SSR fills data segments' holes, never node segments'): the chain's
# recovery reserve, its checkpoints and cleaning rounds must keep every overwrite and
# fsync going (ENOSPC for an overwrite is a violation here). (review 53)
@seed 537
@no-enospc
@device min+24 16
mkdir /d
create /d/f0
write /d/f0 0 32768 1
create /d/f1
write /d/f1 0 32768 2
create /d/f2
write /d/f2 0 32768 3
sync
write /d/f2 4096 16384 10
fsync /d/f2
write /d/f0 28672 4096 11
fsync /d/f0
write /d/f2 4096 16384 12
fdatasync /d/f2
write /d/f2 8192 12288 13
fsync /d/f2
write /d/f2 24576 4096 14
fsync /d/f2
write /d/f1 8192 16384 15
fdatasync /d/f1
write /d/f2 4096 4096 16
fsync /d/f2
write /d/f1 24576 8192 17
fsync /d/f1
write /d/f2 4096 8192 18
fdatasync /d/f2
write /d/f2 12288 12288 19
fsync /d/f2
write /d/f2 12288 4096 20
fsync /d/f2
write /d/f1 16384 16384 21
fdatasync /d/f1
write /d/f1 4096 8192 22
fsync /d/f1
write /d/f1 16384 8192 23
fsync /d/f1
write /d/f0 20480 12288 24
fdatasync /d/f0
write /d/f2 20480 4096 25
fsync /d/f2
write /d/f0 24576 4096 26
fsync /d/f0
write /d/f1 8192 8192 27
fdatasync /d/f1
write /d/f1 20480 8192 28
fsync /d/f1
write /d/f0 0 4096 29
fsync /d/f0
write /d/f2 24576 8192 30
fdatasync /d/f2
write /d/f0 4096 16384 31
fsync /d/f0
write /d/f2 24576 8192 32
fsync /d/f2
write /d/f0 0 16384 33
fdatasync /d/f0
write /d/f2 8192 8192 34
fsync /d/f2
write /d/f0 8192 8192 35
fsync /d/f0
write /d/f0 16384 8192 36
fdatasync /d/f0
write /d/f1 0 4096 37
fsync /d/f1
write /d/f2 4096 16384 38
fsync /d/f2
write /d/f0 4096 8192 39
fdatasync /d/f0
write /d/f1 20480 12288 40
fsync /d/f1
write /d/f2 16384 8192 41
fsync /d/f2
write /d/f2 4096 16384 42
fdatasync /d/f2
write /d/f0 4096 4096 43
fsync /d/f0
write /d/f1 16384 12288 44
fsync /d/f1
write /d/f2 24576 4096 45
fdatasync /d/f2
write /d/f0 8192 12288 46
fsync /d/f0
write /d/f1 28672 4096 47
fsync /d/f1
write /d/f1 12288 4096 48
fdatasync /d/f1
write /d/f2 16384 16384 49
fsync /d/f2
write /d/f2 8192 16384 50
fsync /d/f2
write /d/f1 4096 8192 51
fdatasync /d/f1
write /d/f0 16384 16384 52
fsync /d/f0
write /d/f0 4096 12288 53
fsync /d/f0
write /d/f2 20480 8192 54
fdatasync /d/f2
write /d/f0 28672 4096 55
fsync /d/f0
write /d/f1 16384 12288 56
fsync /d/f1
write /d/f2 8192 12288 57
fdatasync /d/f2
write /d/f1 12288 16384 58
fsync /d/f1
write /d/f1 4096 8192 59
fsync /d/f1
write /d/f2 16384 12288 60
fdatasync /d/f2
write /d/f0 4096 12288 61
fsync /d/f0
write /d/f0 4096 16384 62
fsync /d/f0
write /d/f0 16384 12288 63
fdatasync /d/f0
write /d/f2 12288 4096 64
fsync /d/f2
write /d/f1 16384 12288 65
fsync /d/f1
write /d/f2 0 4096 66
fdatasync /d/f2
write /d/f2 16384 16384 67
fsync /d/f2
write /d/f0 12288 16384 68
fsync /d/f0
write /d/f2 8192 8192 69
fdatasync /d/f2
write /d/f0 4096 12288 70
fsync /d/f0
write /d/f0 20480 4096 71
fsync /d/f0
write /d/f0 4096 8192 72
fdatasync /d/f0
write /d/f2 0 4096 73
fsync /d/f2
write /d/f0 24576 4096 74
fsync /d/f0
write /d/f1 12288 16384 75
fdatasync /d/f1
write /d/f0 24576 4096 76
fsync /d/f0
write /d/f1 0 12288 77
fsync /d/f1
write /d/f0 24576 8192 78
fdatasync /d/f0
write /d/f2 8192 12288 79
fsync /d/f2
write /d/f1 16384 8192 80
fsync /d/f1
write /d/f1 24576 4096 81
fdatasync /d/f1
write /d/f0 4096 16384 82
fsync /d/f0
write /d/f1 24576 4096 83
fsync /d/f1
write /d/f0 12288 16384 84
fdatasync /d/f0
write /d/f0 8192 4096 85
fsync /d/f0
write /d/f1 0 12288 86
fsync /d/f1
write /d/f0 12288 8192 87
fdatasync /d/f0
write /d/f2 16384 4096 88
fsync /d/f2
write /d/f0 0 12288 89
fsync /d/f0
write /d/f2 16384 12288 90
fdatasync /d/f2
write /d/f1 0 12288 91
fsync /d/f1
write /d/f0 16384 16384 92
fsync /d/f0
write /d/f0 0 16384 93
fdatasync /d/f0
write /d/f1 8192 16384 94
fsync /d/f1
write /d/f1 0 4096 95
fsync /d/f1
write /d/f0 28672 4096 96
fdatasync /d/f0
write /d/f0 8192 12288 97
fsync /d/f0
write /d/f0 28672 4096 98
fsync /d/f0
write /d/f1 4096 4096 99
fdatasync /d/f1
write /d/f0 4096 4096 100
fsync /d/f0
write /d/f1 0 12288 101
fsync /d/f1
write /d/f2 28672 4096 102
fdatasync /d/f2
write /d/f2 8192 4096 103
fsync /d/f2
write /d/f2 8192 16384 104
fsync /d/f2
write /d/f0 0 16384 105
fdatasync /d/f0
write /d/f0 16384 8192 106
fsync /d/f0
write /d/f2 8192 12288 107
fsync /d/f2
write /d/f0 20480 4096 108
fdatasync /d/f0
write /d/f2 8192 16384 109
fsync /d/f2
write /d/f2 12288 16384 110
fsync /d/f2
write /d/f0 0 8192 111
fdatasync /d/f0
write /d/f1 28672 4096 112
fsync /d/f1
write /d/f1 12288 16384 113
fsync /d/f1
write /d/f0 12288 4096 114
fdatasync /d/f0
write /d/f2 16384 12288 115
fsync /d/f2
write /d/f1 12288 16384 116
fsync /d/f1
write /d/f2 8192 16384 117
fdatasync /d/f2
write /d/f1 8192 8192 118
fsync /d/f1
write /d/f2 12288 4096 119
fsync /d/f2
write /d/f1 4096 12288 120
fdatasync /d/f1
write /d/f0 4096 16384 121
fsync /d/f0
write /d/f0 0 16384 122
fsync /d/f0
write /d/f0 20480 12288 123
fdatasync /d/f0
write /d/f0 20480 8192 124
fsync /d/f0
write /d/f1 4096 16384 125
fsync /d/f1
write /d/f0 8192 12288 126
fdatasync /d/f0
write /d/f1 8192 16384 127
fsync /d/f1
write /d/f0 12288 12288 128
fsync /d/f0
write /d/f2 28672 4096 129
fdatasync /d/f2
write /d/f1 16384 4096 130
fsync /d/f1
write /d/f1 4096 8192 131
fsync /d/f1
write /d/f0 16384 8192 132
fdatasync /d/f0
write /d/f0 8192 12288 133
fsync /d/f0
write /d/f2 20480 4096 134
fsync /d/f2
write /d/f2 4096 8192 135
fdatasync /d/f2
write /d/f1 16384 4096 136
fsync /d/f1
write /d/f1 0 4096 137
fsync /d/f1
write /d/f1 12288 12288 138
fdatasync /d/f1
write /d/f2 20480 4096 139
fsync /d/f2
write /d/f2 4096 12288 140
fsync /d/f2
write /d/f0 16384 12288 141
fdatasync /d/f0
write /d/f1 8192 16384 142
fsync /d/f1
write /d/f1 28672 4096 143
fsync /d/f1
write /d/f2 28672 4096 144
fdatasync /d/f2
write /d/f0 24576 4096 145
fsync /d/f0
write /d/f1 20480 4096 146
fsync /d/f1
write /d/f1 4096 16384 147
fdatasync /d/f1
write /d/f2 12288 16384 148
fsync /d/f2
write /d/f2 20480 8192 149
fsync /d/f2
write /d/f1 20480 4096 150
fdatasync /d/f1
write /d/f1 8192 16384 151
fsync /d/f1
write /d/f0 8192 16384 152
fsync /d/f0
write /d/f1 0 8192 153
fdatasync /d/f1
write /d/f1 16384 12288 154
fsync /d/f1
write /d/f0 12288 8192 155
fsync /d/f0
write /d/f2 12288 8192 156
fdatasync /d/f2
write /d/f1 8192 4096 157
fsync /d/f1
write /d/f0 4096 12288 158
fsync /d/f0
write /d/f1 4096 12288 159
fdatasync /d/f1
write /d/f0 0 16384 160
fsync /d/f0
write /d/f1 28672 4096 161
fsync /d/f1
write /d/f0 0 4096 162
fdatasync /d/f0
write /d/f1 16384 12288 163
fsync /d/f1
write /d/f1 24576 8192 164
fsync /d/f1
write /d/f1 8192 8192 165
fdatasync /d/f1
write /d/f0 8192 4096 166
fsync /d/f0
write /d/f0 0 16384 167
fsync /d/f0
write /d/f0 12288 8192 168
fdatasync /d/f0
write /d/f1 24576 4096 169
fsync /d/f1

# Data beside its chain churning a nearly full device: filled, then the filler cut back
# by a few segments; small files overwritten and fsync'd over and over, so that node
# segments fill with freed data copies that only cleaning reclaims; an ENOSPC for an
# overwrite shows in enospc_returned beyond the fill's two. (review 53)
@seed 538
@discard ignore
@device min+64 16
mkdir /d
create /d/f0
write /d/f0 0 32768 1
create /d/f1
write /d/f1 0 32768 2
create /d/f2
write /d/f2 0 32768 3
sync
create /fill
fill /fill 16384 90 0
fill /fill 4096 91 64
shrink /fill 196608
sync
write /d/f1 0 12288 10
fsync /d/f1
write /d/f1 8192 4096 11
fsync /d/f1
write /d/f1 16384 12288 12
fdatasync /d/f1
write /d/f0 24576 8192 13
fsync /d/f0
write /d/f2 12288 8192 14
fsync /d/f2
write /d/f2 28672 4096 15
fdatasync /d/f2
write /d/f1 4096 16384 16
fsync /d/f1
write /d/f2 12288 12288 17
fsync /d/f2
write /d/f1 12288 16384 18
fdatasync /d/f1
write /d/f2 12288 16384 19
fsync /d/f2
write /d/f0 20480 12288 20
fsync /d/f0
write /d/f0 4096 8192 21
fdatasync /d/f0
write /d/f1 8192 12288 22
fsync /d/f1
write /d/f1 4096 16384 23
fsync /d/f1
write /d/f0 4096 4096 24
fdatasync /d/f0
write /d/f1 8192 16384 25
fsync /d/f1
write /d/f1 4096 4096 26
fsync /d/f1
write /d/f2 8192 8192 27
fdatasync /d/f2
write /d/f1 4096 16384 28
fsync /d/f1
write /d/f2 0 4096 29
fsync /d/f2
write /d/f0 8192 16384 30
fdatasync /d/f0
write /d/f2 4096 16384 31
fsync /d/f2
write /d/f0 8192 8192 32
fsync /d/f0
write /d/f1 12288 16384 33
fdatasync /d/f1
write /d/f2 24576 8192 34
fsync /d/f2
write /d/f1 20480 12288 35
fsync /d/f1
write /d/f1 0 16384 36
fdatasync /d/f1
write /d/f0 8192 16384 37
fsync /d/f0
write /d/f0 16384 4096 38
fsync /d/f0
write /d/f1 0 4096 39
fdatasync /d/f1
write /d/f1 16384 16384 40
fsync /d/f1
write /d/f1 4096 8192 41
fsync /d/f1
write /d/f0 0 12288 42
fdatasync /d/f0
write /d/f0 8192 4096 43
fsync /d/f0
write /d/f1 0 8192 44
fsync /d/f1
write /d/f1 24576 8192 45
fdatasync /d/f1
write /d/f0 20480 8192 46
fsync /d/f0
write /d/f2 4096 16384 47
fsync /d/f2
write /d/f2 16384 16384 48
fdatasync /d/f2
write /d/f1 0 12288 49
fsync /d/f1
write /d/f2 16384 4096 50
fsync /d/f2
write /d/f1 16384 16384 51
fdatasync /d/f1
write /d/f1 0 8192 52
fsync /d/f1
write /d/f0 4096 4096 53
fsync /d/f0
write /d/f0 0 16384 54
fdatasync /d/f0
write /d/f2 16384 4096 55
fsync /d/f2
write /d/f2 16384 16384 56
fsync /d/f2
write /d/f2 16384 16384 57
fdatasync /d/f2
write /d/f2 0 4096 58
fsync /d/f2
write /d/f2 20480 12288 59
fsync /d/f2
write /d/f0 4096 8192 60
fdatasync /d/f0
write /d/f0 8192 16384 61
fsync /d/f0
write /d/f1 4096 16384 62
fsync /d/f1
write /d/f0 28672 4096 63
fdatasync /d/f0
write /d/f0 20480 4096 64
fsync /d/f0
write /d/f1 12288 12288 65
fsync /d/f1
write /d/f1 12288 12288 66
fdatasync /d/f1
write /d/f1 4096 16384 67
fsync /d/f1
write /d/f2 20480 4096 68
fsync /d/f2
write /d/f1 4096 8192 69
fdatasync /d/f1
write /d/f1 16384 12288 70
fsync /d/f1
write /d/f1 20480 12288 71
fsync /d/f1
write /d/f1 20480 4096 72
fdatasync /d/f1
write /d/f2 8192 4096 73
fsync /d/f2
write /d/f1 12288 8192 74
fsync /d/f1
write /d/f0 8192 4096 75
fdatasync /d/f0
write /d/f2 16384 4096 76
fsync /d/f2
write /d/f0 12288 4096 77
fsync /d/f0
write /d/f2 8192 12288 78
fdatasync /d/f2
write /d/f2 16384 4096 79
fsync /d/f2
write /d/f2 8192 12288 80
fsync /d/f2
write /d/f2 12288 8192 81
fdatasync /d/f2
write /d/f0 16384 8192 82
fsync /d/f0
write /d/f2 0 16384 83
fsync /d/f2
write /d/f0 12288 16384 84
fdatasync /d/f0
write /d/f2 8192 8192 85
fsync /d/f2
write /d/f2 4096 8192 86
fsync /d/f2
write /d/f0 4096 4096 87
fdatasync /d/f0
write /d/f1 0 12288 88
fsync /d/f1
write /d/f0 8192 4096 89
fsync /d/f0
write /d/f1 0 8192 90
fdatasync /d/f1
write /d/f1 24576 8192 91
fsync /d/f1
write /d/f1 4096 16384 92
fsync /d/f1
write /d/f0 16384 16384 93
fdatasync /d/f0
write /d/f0 4096 4096 94
fsync /d/f0
write /d/f0 8192 16384 95
fsync /d/f0
write /d/f0 16384 12288 96
fdatasync /d/f0
write /d/f0 12288 8192 97
fsync /d/f0
write /d/f0 20480 4096 98
fsync /d/f0
write /d/f1 8192 12288 99
fdatasync /d/f1
write /d/f0 4096 16384 100
fsync /d/f0
write /d/f2 16384 8192 101
fsync /d/f2
write /d/f2 8192 8192 102
fdatasync /d/f2
write /d/f1 4096 8192 103
fsync /d/f1
write /d/f2 16384 16384 104
fsync /d/f2
write /d/f1 20480 4096 105
fdatasync /d/f1
write /d/f1 8192 4096 106
fsync /d/f1
write /d/f0 16384 8192 107
fsync /d/f0
write /d/f2 0 4096 108
fdatasync /d/f2
write /d/f2 16384 16384 109
fsync /d/f2
write /d/f0 8192 12288 110
fsync /d/f0
write /d/f0 12288 16384 111
fdatasync /d/f0
write /d/f0 8192 16384 112
fsync /d/f0
write /d/f0 0 16384 113
fsync /d/f0
write /d/f0 16384 16384 114
fdatasync /d/f0
write /d/f0 0 8192 115
fsync /d/f0
write /d/f1 16384 16384 116
fsync /d/f1
write /d/f1 4096 16384 117
fdatasync /d/f1
write /d/f1 12288 16384 118
fsync /d/f1
write /d/f2 4096 8192 119
fsync /d/f2
write /d/f1 0 12288 120
fdatasync /d/f1
write /d/f2 0 4096 121
fsync /d/f2
write /d/f1 8192 8192 122
fsync /d/f1
write /d/f1 4096 16384 123
fdatasync /d/f1
write /d/f0 8192 4096 124
fsync /d/f0
write /d/f2 16384 16384 125
fsync /d/f2
write /d/f1 16384 4096 126
fdatasync /d/f1
write /d/f1 4096 8192 127
fsync /d/f1
write /d/f0 8192 12288 128
fsync /d/f0
write /d/f1 8192 12288 129
fdatasync /d/f1
write /d/f1 0 4096 130
fsync /d/f1
write /d/f2 8192 16384 131
fsync /d/f2
write /d/f0 0 12288 132
fdatasync /d/f0
write /d/f0 12288 16384 133
fsync /d/f0
write /d/f0 8192 12288 134
fsync /d/f0
write /d/f2 20480 12288 135
fdatasync /d/f2
write /d/f0 0 4096 136
fsync /d/f0
write /d/f2 12288 8192 137
fsync /d/f2
write /d/f1 12288 12288 138
fdatasync /d/f1
write /d/f0 16384 12288 139
fsync /d/f0
write /d/f1 4096 12288 140
fsync /d/f1
write /d/f1 12288 8192 141
fdatasync /d/f1
write /d/f0 12288 4096 142
fsync /d/f0
write /d/f1 0 12288 143
fsync /d/f1
write /d/f1 0 12288 144
fdatasync /d/f1
write /d/f0 0 8192 145
fsync /d/f0
write /d/f1 8192 16384 146
fsync /d/f1
write /d/f2 24576 4096 147
fdatasync /d/f2
write /d/f2 4096 8192 148
fsync /d/f2
write /d/f0 24576 4096 149
fsync /d/f0
write /d/f0 16384 16384 150
fdatasync /d/f0
write /d/f2 8192 12288 151
fsync /d/f2
write /d/f2 16384 16384 152
fsync /d/f2
write /d/f2 16384 12288 153
fdatasync /d/f2
write /d/f0 28672 4096 154
fsync /d/f0
write /d/f0 8192 16384 155
fsync /d/f0
write /d/f0 4096 12288 156
fdatasync /d/f0
write /d/f2 20480 4096 157
fsync /d/f2
write /d/f2 8192 4096 158
fsync /d/f2
write /d/f2 4096 4096 159
fdatasync /d/f2
write /d/f0 4096 16384 160
fsync /d/f0
write /d/f2 8192 8192 161
fsync /d/f2
write /d/f1 4096 16384 162
fdatasync /d/f1
write /d/f2 16384 8192 163
fsync /d/f2
write /d/f1 8192 4096 164
fsync /d/f1
write /d/f1 20480 8192 165
fdatasync /d/f1
write /d/f0 16384 4096 166
fsync /d/f0
write /d/f2 8192 12288 167
fsync /d/f2
write /d/f2 20480 4096 168
fdatasync /d/f2
write /d/f0 12288 4096 169
fsync /d/f0

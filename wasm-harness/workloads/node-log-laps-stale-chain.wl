# mutant-recovery-ignores-version and mutant-recovery-no-crc: the warm node log laps the
# device. Lap 1: /f's size is changed by truncate and fsync'd 1,900 times (one inode node
# each, no data block, so the batch's data checksum has nothing to verify; synced every
# 60 fsyncs), then a last size change persisted by sync alone. Lap 2: the same with /g,
# so the log reuses segments full of fsync-marked inodes of /f from earlier checkpoint
# epochs. After each checkpoint of lap 2 the blocks where the chain would continue hold
# those stale nodes, and a torn inode write of /g can put a new footer over a stale body:
# recovery must stop at the first node of another checkpoint version or with a bad CRC,
# or /f's (or /g's) size goes back in time. The device ignores discards, so freed
# segments keep their old nodes.
@seed 12
@completion random2
@discard ignore
create /f
create /g
sync
truncate /f 1
fsync /f
truncate /f 7920
fsync /f
truncate /f 15839
fsync /f
truncate /f 23758
fsync /f
truncate /f 31677
fsync /f
truncate /f 39596
fsync /f
truncate /f 47515
fsync /f
truncate /f 55434
fsync /f
truncate /f 63353
fsync /f
truncate /f 71272
fsync /f
truncate /f 79191
fsync /f
truncate /f 87110
fsync /f
truncate /f 95029
fsync /f
truncate /f 102948
fsync /f
truncate /f 110867
fsync /f
truncate /f 118786
fsync /f
truncate /f 126705
fsync /f
truncate /f 134624
fsync /f
truncate /f 142543
fsync /f
truncate /f 150462
fsync /f
truncate /f 158381
fsync /f
truncate /f 166300
fsync /f
truncate /f 174219
fsync /f
truncate /f 182138
fsync /f
truncate /f 190057
fsync /f
truncate /f 197976
fsync /f
truncate /f 5895
fsync /f
truncate /f 13814
fsync /f
truncate /f 21733
fsync /f
truncate /f 29652
fsync /f
truncate /f 37571
fsync /f
truncate /f 45490
fsync /f
truncate /f 53409
fsync /f
truncate /f 61328
fsync /f
truncate /f 69247
fsync /f
truncate /f 77166
fsync /f
truncate /f 85085
fsync /f
truncate /f 93004
fsync /f
truncate /f 100923
fsync /f
truncate /f 108842
fsync /f
truncate /f 116761
fsync /f
truncate /f 124680
fsync /f
truncate /f 132599
fsync /f
truncate /f 140518
fsync /f
truncate /f 148437
fsync /f
truncate /f 156356
fsync /f
truncate /f 164275
fsync /f
truncate /f 172194
fsync /f
truncate /f 180113
fsync /f
truncate /f 188032
fsync /f
truncate /f 195951
fsync /f
truncate /f 3870
fsync /f
truncate /f 11789
fsync /f
truncate /f 19708
fsync /f
truncate /f 27627
fsync /f
truncate /f 35546
fsync /f
truncate /f 43465
fsync /f
truncate /f 51384
fsync /f
truncate /f 59303
fsync /f
truncate /f 67222
fsync /f
sync
truncate /f 75141
fsync /f
truncate /f 83060
fsync /f
truncate /f 90979
fsync /f
truncate /f 98898
fsync /f
truncate /f 106817
fsync /f
truncate /f 114736
fsync /f
truncate /f 122655
fsync /f
truncate /f 130574
fsync /f
truncate /f 138493
fsync /f
truncate /f 146412
fsync /f
truncate /f 154331
fsync /f
truncate /f 162250
fsync /f
truncate /f 170169
fsync /f
truncate /f 178088
fsync /f
truncate /f 186007
fsync /f
truncate /f 193926
fsync /f
truncate /f 1845
fsync /f
truncate /f 9764
fsync /f
truncate /f 17683
fsync /f
truncate /f 25602
fsync /f
truncate /f 33521
fsync /f
truncate /f 41440
fsync /f
truncate /f 49359
fsync /f
truncate /f 57278
fsync /f
truncate /f 65197
fsync /f
truncate /f 73116
fsync /f
truncate /f 81035
fsync /f
truncate /f 88954
fsync /f
truncate /f 96873
fsync /f
truncate /f 104792
fsync /f
truncate /f 112711
fsync /f
truncate /f 120630
fsync /f
truncate /f 128549
fsync /f
truncate /f 136468
fsync /f
truncate /f 144387
fsync /f
truncate /f 152306
fsync /f
truncate /f 160225
fsync /f
truncate /f 168144
fsync /f
truncate /f 176063
fsync /f
truncate /f 183982
fsync /f
truncate /f 191901
fsync /f
truncate /f 199820
fsync /f
truncate /f 7739
fsync /f
truncate /f 15658
fsync /f
truncate /f 23577
fsync /f
truncate /f 31496
fsync /f
truncate /f 39415
fsync /f
truncate /f 47334
fsync /f
truncate /f 55253
fsync /f
truncate /f 63172
fsync /f
truncate /f 71091
fsync /f
truncate /f 79010
fsync /f
truncate /f 86929
fsync /f
truncate /f 94848
fsync /f
truncate /f 102767
fsync /f
truncate /f 110686
fsync /f
truncate /f 118605
fsync /f
truncate /f 126524
fsync /f
truncate /f 134443
fsync /f
truncate /f 142362
fsync /f
sync
truncate /f 150281
fsync /f
truncate /f 158200
fsync /f
truncate /f 166119
fsync /f
truncate /f 174038
fsync /f
truncate /f 181957
fsync /f
truncate /f 189876
fsync /f
truncate /f 197795
fsync /f
truncate /f 5714
fsync /f
truncate /f 13633
fsync /f
truncate /f 21552
fsync /f
truncate /f 29471
fsync /f
truncate /f 37390
fsync /f
truncate /f 45309
fsync /f
truncate /f 53228
fsync /f
truncate /f 61147
fsync /f
truncate /f 69066
fsync /f
truncate /f 76985
fsync /f
truncate /f 84904
fsync /f
truncate /f 92823
fsync /f
truncate /f 100742
fsync /f
truncate /f 108661
fsync /f
truncate /f 116580
fsync /f
truncate /f 124499
fsync /f
truncate /f 132418
fsync /f
truncate /f 140337
fsync /f
truncate /f 148256
fsync /f
truncate /f 156175
fsync /f
truncate /f 164094
fsync /f
truncate /f 172013
fsync /f
truncate /f 179932
fsync /f
truncate /f 187851
fsync /f
truncate /f 195770
fsync /f
truncate /f 3689
fsync /f
truncate /f 11608
fsync /f
truncate /f 19527
fsync /f
truncate /f 27446
fsync /f
truncate /f 35365
fsync /f
truncate /f 43284
fsync /f
truncate /f 51203
fsync /f
truncate /f 59122
fsync /f
truncate /f 67041
fsync /f
truncate /f 74960
fsync /f
truncate /f 82879
fsync /f
truncate /f 90798
fsync /f
truncate /f 98717
fsync /f
truncate /f 106636
fsync /f
truncate /f 114555
fsync /f
truncate /f 122474
fsync /f
truncate /f 130393
fsync /f
truncate /f 138312
fsync /f
truncate /f 146231
fsync /f
truncate /f 154150
fsync /f
truncate /f 162069
fsync /f
truncate /f 169988
fsync /f
truncate /f 177907
fsync /f
truncate /f 185826
fsync /f
truncate /f 193745
fsync /f
truncate /f 1664
fsync /f
truncate /f 9583
fsync /f
truncate /f 17502
fsync /f
sync
truncate /f 25421
fsync /f
truncate /f 33340
fsync /f
truncate /f 41259
fsync /f
truncate /f 49178
fsync /f
truncate /f 57097
fsync /f
truncate /f 65016
fsync /f
truncate /f 72935
fsync /f
truncate /f 80854
fsync /f
truncate /f 88773
fsync /f
truncate /f 96692
fsync /f
truncate /f 104611
fsync /f
truncate /f 112530
fsync /f
truncate /f 120449
fsync /f
truncate /f 128368
fsync /f
truncate /f 136287
fsync /f
truncate /f 144206
fsync /f
truncate /f 152125
fsync /f
truncate /f 160044
fsync /f
truncate /f 167963
fsync /f
truncate /f 175882
fsync /f
truncate /f 183801
fsync /f
truncate /f 191720
fsync /f
truncate /f 199639
fsync /f
truncate /f 7558
fsync /f
truncate /f 15477
fsync /f
truncate /f 23396
fsync /f
truncate /f 31315
fsync /f
truncate /f 39234
fsync /f
truncate /f 47153
fsync /f
truncate /f 55072
fsync /f
truncate /f 62991
fsync /f
truncate /f 70910
fsync /f
truncate /f 78829
fsync /f
truncate /f 86748
fsync /f
truncate /f 94667
fsync /f
truncate /f 102586
fsync /f
truncate /f 110505
fsync /f
truncate /f 118424
fsync /f
truncate /f 126343
fsync /f
truncate /f 134262
fsync /f
truncate /f 142181
fsync /f
truncate /f 150100
fsync /f
truncate /f 158019
fsync /f
truncate /f 165938
fsync /f
truncate /f 173857
fsync /f
truncate /f 181776
fsync /f
truncate /f 189695
fsync /f
truncate /f 197614
fsync /f
truncate /f 5533
fsync /f
truncate /f 13452
fsync /f
truncate /f 21371
fsync /f
truncate /f 29290
fsync /f
truncate /f 37209
fsync /f
truncate /f 45128
fsync /f
truncate /f 53047
fsync /f
truncate /f 60966
fsync /f
truncate /f 68885
fsync /f
truncate /f 76804
fsync /f
truncate /f 84723
fsync /f
truncate /f 92642
fsync /f
sync
truncate /f 100561
fsync /f
truncate /f 108480
fsync /f
truncate /f 116399
fsync /f
truncate /f 124318
fsync /f
truncate /f 132237
fsync /f
truncate /f 140156
fsync /f
truncate /f 148075
fsync /f
truncate /f 155994
fsync /f
truncate /f 163913
fsync /f
truncate /f 171832
fsync /f
truncate /f 179751
fsync /f
truncate /f 187670
fsync /f
truncate /f 195589
fsync /f
truncate /f 3508
fsync /f
truncate /f 11427
fsync /f
truncate /f 19346
fsync /f
truncate /f 27265
fsync /f
truncate /f 35184
fsync /f
truncate /f 43103
fsync /f
truncate /f 51022
fsync /f
truncate /f 58941
fsync /f
truncate /f 66860
fsync /f
truncate /f 74779
fsync /f
truncate /f 82698
fsync /f
truncate /f 90617
fsync /f
truncate /f 98536
fsync /f
truncate /f 106455
fsync /f
truncate /f 114374
fsync /f
truncate /f 122293
fsync /f
truncate /f 130212
fsync /f
truncate /f 138131
fsync /f
truncate /f 146050
fsync /f
truncate /f 153969
fsync /f
truncate /f 161888
fsync /f
truncate /f 169807
fsync /f
truncate /f 177726
fsync /f
truncate /f 185645
fsync /f
truncate /f 193564
fsync /f
truncate /f 1483
fsync /f
truncate /f 9402
fsync /f
truncate /f 17321
fsync /f
truncate /f 25240
fsync /f
truncate /f 33159
fsync /f
truncate /f 41078
fsync /f
truncate /f 48997
fsync /f
truncate /f 56916
fsync /f
truncate /f 64835
fsync /f
truncate /f 72754
fsync /f
truncate /f 80673
fsync /f
truncate /f 88592
fsync /f
truncate /f 96511
fsync /f
truncate /f 104430
fsync /f
truncate /f 112349
fsync /f
truncate /f 120268
fsync /f
truncate /f 128187
fsync /f
truncate /f 136106
fsync /f
truncate /f 144025
fsync /f
truncate /f 151944
fsync /f
truncate /f 159863
fsync /f
truncate /f 167782
fsync /f
sync
truncate /f 175701
fsync /f
truncate /f 183620
fsync /f
truncate /f 191539
fsync /f
truncate /f 199458
fsync /f
truncate /f 7377
fsync /f
truncate /f 15296
fsync /f
truncate /f 23215
fsync /f
truncate /f 31134
fsync /f
truncate /f 39053
fsync /f
truncate /f 46972
fsync /f
truncate /f 54891
fsync /f
truncate /f 62810
fsync /f
truncate /f 70729
fsync /f
truncate /f 78648
fsync /f
truncate /f 86567
fsync /f
truncate /f 94486
fsync /f
truncate /f 102405
fsync /f
truncate /f 110324
fsync /f
truncate /f 118243
fsync /f
truncate /f 126162
fsync /f
truncate /f 134081
fsync /f
truncate /f 142000
fsync /f
truncate /f 149919
fsync /f
truncate /f 157838
fsync /f
truncate /f 165757
fsync /f
truncate /f 173676
fsync /f
truncate /f 181595
fsync /f
truncate /f 189514
fsync /f
truncate /f 197433
fsync /f
truncate /f 5352
fsync /f
truncate /f 13271
fsync /f
truncate /f 21190
fsync /f
truncate /f 29109
fsync /f
truncate /f 37028
fsync /f
truncate /f 44947
fsync /f
truncate /f 52866
fsync /f
truncate /f 60785
fsync /f
truncate /f 68704
fsync /f
truncate /f 76623
fsync /f
truncate /f 84542
fsync /f
truncate /f 92461
fsync /f
truncate /f 100380
fsync /f
truncate /f 108299
fsync /f
truncate /f 116218
fsync /f
truncate /f 124137
fsync /f
truncate /f 132056
fsync /f
truncate /f 139975
fsync /f
truncate /f 147894
fsync /f
truncate /f 155813
fsync /f
truncate /f 163732
fsync /f
truncate /f 171651
fsync /f
truncate /f 179570
fsync /f
truncate /f 187489
fsync /f
truncate /f 195408
fsync /f
truncate /f 3327
fsync /f
truncate /f 11246
fsync /f
truncate /f 19165
fsync /f
truncate /f 27084
fsync /f
truncate /f 35003
fsync /f
truncate /f 42922
fsync /f
sync
truncate /f 50841
fsync /f
truncate /f 58760
fsync /f
truncate /f 66679
fsync /f
truncate /f 74598
fsync /f
truncate /f 82517
fsync /f
truncate /f 90436
fsync /f
truncate /f 98355
fsync /f
truncate /f 106274
fsync /f
truncate /f 114193
fsync /f
truncate /f 122112
fsync /f
truncate /f 130031
fsync /f
truncate /f 137950
fsync /f
truncate /f 145869
fsync /f
truncate /f 153788
fsync /f
truncate /f 161707
fsync /f
truncate /f 169626
fsync /f
truncate /f 177545
fsync /f
truncate /f 185464
fsync /f
truncate /f 193383
fsync /f
truncate /f 1302
fsync /f
truncate /f 9221
fsync /f
truncate /f 17140
fsync /f
truncate /f 25059
fsync /f
truncate /f 32978
fsync /f
truncate /f 40897
fsync /f
truncate /f 48816
fsync /f
truncate /f 56735
fsync /f
truncate /f 64654
fsync /f
truncate /f 72573
fsync /f
truncate /f 80492
fsync /f
truncate /f 88411
fsync /f
truncate /f 96330
fsync /f
truncate /f 104249
fsync /f
truncate /f 112168
fsync /f
truncate /f 120087
fsync /f
truncate /f 128006
fsync /f
truncate /f 135925
fsync /f
truncate /f 143844
fsync /f
truncate /f 151763
fsync /f
truncate /f 159682
fsync /f
truncate /f 167601
fsync /f
truncate /f 175520
fsync /f
truncate /f 183439
fsync /f
truncate /f 191358
fsync /f
truncate /f 199277
fsync /f
truncate /f 7196
fsync /f
truncate /f 15115
fsync /f
truncate /f 23034
fsync /f
truncate /f 30953
fsync /f
truncate /f 38872
fsync /f
truncate /f 46791
fsync /f
truncate /f 54710
fsync /f
truncate /f 62629
fsync /f
truncate /f 70548
fsync /f
truncate /f 78467
fsync /f
truncate /f 86386
fsync /f
truncate /f 94305
fsync /f
truncate /f 102224
fsync /f
truncate /f 110143
fsync /f
truncate /f 118062
fsync /f
sync
truncate /f 125981
fsync /f
truncate /f 133900
fsync /f
truncate /f 141819
fsync /f
truncate /f 149738
fsync /f
truncate /f 157657
fsync /f
truncate /f 165576
fsync /f
truncate /f 173495
fsync /f
truncate /f 181414
fsync /f
truncate /f 189333
fsync /f
truncate /f 197252
fsync /f
truncate /f 5171
fsync /f
truncate /f 13090
fsync /f
truncate /f 21009
fsync /f
truncate /f 28928
fsync /f
truncate /f 36847
fsync /f
truncate /f 44766
fsync /f
truncate /f 52685
fsync /f
truncate /f 60604
fsync /f
truncate /f 68523
fsync /f
truncate /f 76442
fsync /f
truncate /f 84361
fsync /f
truncate /f 92280
fsync /f
truncate /f 100199
fsync /f
truncate /f 108118
fsync /f
truncate /f 116037
fsync /f
truncate /f 123956
fsync /f
truncate /f 131875
fsync /f
truncate /f 139794
fsync /f
truncate /f 147713
fsync /f
truncate /f 155632
fsync /f
truncate /f 163551
fsync /f
truncate /f 171470
fsync /f
truncate /f 179389
fsync /f
truncate /f 187308
fsync /f
truncate /f 195227
fsync /f
truncate /f 3146
fsync /f
truncate /f 11065
fsync /f
truncate /f 18984
fsync /f
truncate /f 26903
fsync /f
truncate /f 34822
fsync /f
truncate /f 42741
fsync /f
truncate /f 50660
fsync /f
truncate /f 58579
fsync /f
truncate /f 66498
fsync /f
truncate /f 74417
fsync /f
truncate /f 82336
fsync /f
truncate /f 90255
fsync /f
truncate /f 98174
fsync /f
truncate /f 106093
fsync /f
truncate /f 114012
fsync /f
truncate /f 121931
fsync /f
truncate /f 129850
fsync /f
truncate /f 137769
fsync /f
truncate /f 145688
fsync /f
truncate /f 153607
fsync /f
truncate /f 161526
fsync /f
truncate /f 169445
fsync /f
truncate /f 177364
fsync /f
truncate /f 185283
fsync /f
truncate /f 193202
fsync /f
sync
truncate /f 1121
fsync /f
truncate /f 9040
fsync /f
truncate /f 16959
fsync /f
truncate /f 24878
fsync /f
truncate /f 32797
fsync /f
truncate /f 40716
fsync /f
truncate /f 48635
fsync /f
truncate /f 56554
fsync /f
truncate /f 64473
fsync /f
truncate /f 72392
fsync /f
truncate /f 80311
fsync /f
truncate /f 88230
fsync /f
truncate /f 96149
fsync /f
truncate /f 104068
fsync /f
truncate /f 111987
fsync /f
truncate /f 119906
fsync /f
truncate /f 127825
fsync /f
truncate /f 135744
fsync /f
truncate /f 143663
fsync /f
truncate /f 151582
fsync /f
truncate /f 159501
fsync /f
truncate /f 167420
fsync /f
truncate /f 175339
fsync /f
truncate /f 183258
fsync /f
truncate /f 191177
fsync /f
truncate /f 199096
fsync /f
truncate /f 7015
fsync /f
truncate /f 14934
fsync /f
truncate /f 22853
fsync /f
truncate /f 30772
fsync /f
truncate /f 38691
fsync /f
truncate /f 46610
fsync /f
truncate /f 54529
fsync /f
truncate /f 62448
fsync /f
truncate /f 70367
fsync /f
truncate /f 78286
fsync /f
truncate /f 86205
fsync /f
truncate /f 94124
fsync /f
truncate /f 102043
fsync /f
truncate /f 109962
fsync /f
truncate /f 117881
fsync /f
truncate /f 125800
fsync /f
truncate /f 133719
fsync /f
truncate /f 141638
fsync /f
truncate /f 149557
fsync /f
truncate /f 157476
fsync /f
truncate /f 165395
fsync /f
truncate /f 173314
fsync /f
truncate /f 181233
fsync /f
truncate /f 189152
fsync /f
truncate /f 197071
fsync /f
truncate /f 4990
fsync /f
truncate /f 12909
fsync /f
truncate /f 20828
fsync /f
truncate /f 28747
fsync /f
truncate /f 36666
fsync /f
truncate /f 44585
fsync /f
truncate /f 52504
fsync /f
truncate /f 60423
fsync /f
truncate /f 68342
fsync /f
sync
truncate /f 76261
fsync /f
truncate /f 84180
fsync /f
truncate /f 92099
fsync /f
truncate /f 100018
fsync /f
truncate /f 107937
fsync /f
truncate /f 115856
fsync /f
truncate /f 123775
fsync /f
truncate /f 131694
fsync /f
truncate /f 139613
fsync /f
truncate /f 147532
fsync /f
truncate /f 155451
fsync /f
truncate /f 163370
fsync /f
truncate /f 171289
fsync /f
truncate /f 179208
fsync /f
truncate /f 187127
fsync /f
truncate /f 195046
fsync /f
truncate /f 2965
fsync /f
truncate /f 10884
fsync /f
truncate /f 18803
fsync /f
truncate /f 26722
fsync /f
truncate /f 34641
fsync /f
truncate /f 42560
fsync /f
truncate /f 50479
fsync /f
truncate /f 58398
fsync /f
truncate /f 66317
fsync /f
truncate /f 74236
fsync /f
truncate /f 82155
fsync /f
truncate /f 90074
fsync /f
truncate /f 97993
fsync /f
truncate /f 105912
fsync /f
truncate /f 113831
fsync /f
truncate /f 121750
fsync /f
truncate /f 129669
fsync /f
truncate /f 137588
fsync /f
truncate /f 145507
fsync /f
truncate /f 153426
fsync /f
truncate /f 161345
fsync /f
truncate /f 169264
fsync /f
truncate /f 177183
fsync /f
truncate /f 185102
fsync /f
truncate /f 193021
fsync /f
truncate /f 940
fsync /f
truncate /f 8859
fsync /f
truncate /f 16778
fsync /f
truncate /f 24697
fsync /f
truncate /f 32616
fsync /f
truncate /f 40535
fsync /f
truncate /f 48454
fsync /f
truncate /f 56373
fsync /f
truncate /f 64292
fsync /f
truncate /f 72211
fsync /f
truncate /f 80130
fsync /f
truncate /f 88049
fsync /f
truncate /f 95968
fsync /f
truncate /f 103887
fsync /f
truncate /f 111806
fsync /f
truncate /f 119725
fsync /f
truncate /f 127644
fsync /f
truncate /f 135563
fsync /f
truncate /f 143482
fsync /f
sync
truncate /f 151401
fsync /f
truncate /f 159320
fsync /f
truncate /f 167239
fsync /f
truncate /f 175158
fsync /f
truncate /f 183077
fsync /f
truncate /f 190996
fsync /f
truncate /f 198915
fsync /f
truncate /f 6834
fsync /f
truncate /f 14753
fsync /f
truncate /f 22672
fsync /f
truncate /f 30591
fsync /f
truncate /f 38510
fsync /f
truncate /f 46429
fsync /f
truncate /f 54348
fsync /f
truncate /f 62267
fsync /f
truncate /f 70186
fsync /f
truncate /f 78105
fsync /f
truncate /f 86024
fsync /f
truncate /f 93943
fsync /f
truncate /f 101862
fsync /f
truncate /f 109781
fsync /f
truncate /f 117700
fsync /f
truncate /f 125619
fsync /f
truncate /f 133538
fsync /f
truncate /f 141457
fsync /f
truncate /f 149376
fsync /f
truncate /f 157295
fsync /f
truncate /f 165214
fsync /f
truncate /f 173133
fsync /f
truncate /f 181052
fsync /f
truncate /f 188971
fsync /f
truncate /f 196890
fsync /f
truncate /f 4809
fsync /f
truncate /f 12728
fsync /f
truncate /f 20647
fsync /f
truncate /f 28566
fsync /f
truncate /f 36485
fsync /f
truncate /f 44404
fsync /f
truncate /f 52323
fsync /f
truncate /f 60242
fsync /f
truncate /f 68161
fsync /f
truncate /f 76080
fsync /f
truncate /f 83999
fsync /f
truncate /f 91918
fsync /f
truncate /f 99837
fsync /f
truncate /f 107756
fsync /f
truncate /f 115675
fsync /f
truncate /f 123594
fsync /f
truncate /f 131513
fsync /f
truncate /f 139432
fsync /f
truncate /f 147351
fsync /f
truncate /f 155270
fsync /f
truncate /f 163189
fsync /f
truncate /f 171108
fsync /f
truncate /f 179027
fsync /f
truncate /f 186946
fsync /f
truncate /f 194865
fsync /f
truncate /f 2784
fsync /f
truncate /f 10703
fsync /f
truncate /f 18622
fsync /f
sync
truncate /f 26541
fsync /f
truncate /f 34460
fsync /f
truncate /f 42379
fsync /f
truncate /f 50298
fsync /f
truncate /f 58217
fsync /f
truncate /f 66136
fsync /f
truncate /f 74055
fsync /f
truncate /f 81974
fsync /f
truncate /f 89893
fsync /f
truncate /f 97812
fsync /f
truncate /f 105731
fsync /f
truncate /f 113650
fsync /f
truncate /f 121569
fsync /f
truncate /f 129488
fsync /f
truncate /f 137407
fsync /f
truncate /f 145326
fsync /f
truncate /f 153245
fsync /f
truncate /f 161164
fsync /f
truncate /f 169083
fsync /f
truncate /f 177002
fsync /f
truncate /f 184921
fsync /f
truncate /f 192840
fsync /f
truncate /f 759
fsync /f
truncate /f 8678
fsync /f
truncate /f 16597
fsync /f
truncate /f 24516
fsync /f
truncate /f 32435
fsync /f
truncate /f 40354
fsync /f
truncate /f 48273
fsync /f
truncate /f 56192
fsync /f
truncate /f 64111
fsync /f
truncate /f 72030
fsync /f
truncate /f 79949
fsync /f
truncate /f 87868
fsync /f
truncate /f 95787
fsync /f
truncate /f 103706
fsync /f
truncate /f 111625
fsync /f
truncate /f 119544
fsync /f
truncate /f 127463
fsync /f
truncate /f 135382
fsync /f
truncate /f 143301
fsync /f
truncate /f 151220
fsync /f
truncate /f 159139
fsync /f
truncate /f 167058
fsync /f
truncate /f 174977
fsync /f
truncate /f 182896
fsync /f
truncate /f 190815
fsync /f
truncate /f 198734
fsync /f
truncate /f 6653
fsync /f
truncate /f 14572
fsync /f
truncate /f 22491
fsync /f
truncate /f 30410
fsync /f
truncate /f 38329
fsync /f
truncate /f 46248
fsync /f
truncate /f 54167
fsync /f
truncate /f 62086
fsync /f
truncate /f 70005
fsync /f
truncate /f 77924
fsync /f
truncate /f 85843
fsync /f
truncate /f 93762
fsync /f
sync
truncate /f 101681
fsync /f
truncate /f 109600
fsync /f
truncate /f 117519
fsync /f
truncate /f 125438
fsync /f
truncate /f 133357
fsync /f
truncate /f 141276
fsync /f
truncate /f 149195
fsync /f
truncate /f 157114
fsync /f
truncate /f 165033
fsync /f
truncate /f 172952
fsync /f
truncate /f 180871
fsync /f
truncate /f 188790
fsync /f
truncate /f 196709
fsync /f
truncate /f 4628
fsync /f
truncate /f 12547
fsync /f
truncate /f 20466
fsync /f
truncate /f 28385
fsync /f
truncate /f 36304
fsync /f
truncate /f 44223
fsync /f
truncate /f 52142
fsync /f
truncate /f 60061
fsync /f
truncate /f 67980
fsync /f
truncate /f 75899
fsync /f
truncate /f 83818
fsync /f
truncate /f 91737
fsync /f
truncate /f 99656
fsync /f
truncate /f 107575
fsync /f
truncate /f 115494
fsync /f
truncate /f 123413
fsync /f
truncate /f 131332
fsync /f
truncate /f 139251
fsync /f
truncate /f 147170
fsync /f
truncate /f 155089
fsync /f
truncate /f 163008
fsync /f
truncate /f 170927
fsync /f
truncate /f 178846
fsync /f
truncate /f 186765
fsync /f
truncate /f 194684
fsync /f
truncate /f 2603
fsync /f
truncate /f 10522
fsync /f
truncate /f 18441
fsync /f
truncate /f 26360
fsync /f
truncate /f 34279
fsync /f
truncate /f 42198
fsync /f
truncate /f 50117
fsync /f
truncate /f 58036
fsync /f
truncate /f 65955
fsync /f
truncate /f 73874
fsync /f
truncate /f 81793
fsync /f
truncate /f 89712
fsync /f
truncate /f 97631
fsync /f
truncate /f 105550
fsync /f
truncate /f 113469
fsync /f
truncate /f 121388
fsync /f
truncate /f 129307
fsync /f
truncate /f 137226
fsync /f
truncate /f 145145
fsync /f
truncate /f 153064
fsync /f
truncate /f 160983
fsync /f
truncate /f 168902
fsync /f
sync
truncate /f 176821
fsync /f
truncate /f 184740
fsync /f
truncate /f 192659
fsync /f
truncate /f 578
fsync /f
truncate /f 8497
fsync /f
truncate /f 16416
fsync /f
truncate /f 24335
fsync /f
truncate /f 32254
fsync /f
truncate /f 40173
fsync /f
truncate /f 48092
fsync /f
truncate /f 56011
fsync /f
truncate /f 63930
fsync /f
truncate /f 71849
fsync /f
truncate /f 79768
fsync /f
truncate /f 87687
fsync /f
truncate /f 95606
fsync /f
truncate /f 103525
fsync /f
truncate /f 111444
fsync /f
truncate /f 119363
fsync /f
truncate /f 127282
fsync /f
truncate /f 135201
fsync /f
truncate /f 143120
fsync /f
truncate /f 151039
fsync /f
truncate /f 158958
fsync /f
truncate /f 166877
fsync /f
truncate /f 174796
fsync /f
truncate /f 182715
fsync /f
truncate /f 190634
fsync /f
truncate /f 198553
fsync /f
truncate /f 6472
fsync /f
truncate /f 14391
fsync /f
truncate /f 22310
fsync /f
truncate /f 30229
fsync /f
truncate /f 38148
fsync /f
truncate /f 46067
fsync /f
truncate /f 53986
fsync /f
truncate /f 61905
fsync /f
truncate /f 69824
fsync /f
truncate /f 77743
fsync /f
truncate /f 85662
fsync /f
truncate /f 93581
fsync /f
truncate /f 101500
fsync /f
truncate /f 109419
fsync /f
truncate /f 117338
fsync /f
truncate /f 125257
fsync /f
truncate /f 133176
fsync /f
truncate /f 141095
fsync /f
truncate /f 149014
fsync /f
truncate /f 156933
fsync /f
truncate /f 164852
fsync /f
truncate /f 172771
fsync /f
truncate /f 180690
fsync /f
truncate /f 188609
fsync /f
truncate /f 196528
fsync /f
truncate /f 4447
fsync /f
truncate /f 12366
fsync /f
truncate /f 20285
fsync /f
truncate /f 28204
fsync /f
truncate /f 36123
fsync /f
truncate /f 44042
fsync /f
sync
truncate /f 51961
fsync /f
truncate /f 59880
fsync /f
truncate /f 67799
fsync /f
truncate /f 75718
fsync /f
truncate /f 83637
fsync /f
truncate /f 91556
fsync /f
truncate /f 99475
fsync /f
truncate /f 107394
fsync /f
truncate /f 115313
fsync /f
truncate /f 123232
fsync /f
truncate /f 131151
fsync /f
truncate /f 139070
fsync /f
truncate /f 146989
fsync /f
truncate /f 154908
fsync /f
truncate /f 162827
fsync /f
truncate /f 170746
fsync /f
truncate /f 178665
fsync /f
truncate /f 186584
fsync /f
truncate /f 194503
fsync /f
truncate /f 2422
fsync /f
truncate /f 10341
fsync /f
truncate /f 18260
fsync /f
truncate /f 26179
fsync /f
truncate /f 34098
fsync /f
truncate /f 42017
fsync /f
truncate /f 49936
fsync /f
truncate /f 57855
fsync /f
truncate /f 65774
fsync /f
truncate /f 73693
fsync /f
truncate /f 81612
fsync /f
truncate /f 89531
fsync /f
truncate /f 97450
fsync /f
truncate /f 105369
fsync /f
truncate /f 113288
fsync /f
truncate /f 121207
fsync /f
truncate /f 129126
fsync /f
truncate /f 137045
fsync /f
truncate /f 144964
fsync /f
truncate /f 152883
fsync /f
truncate /f 160802
fsync /f
truncate /f 168721
fsync /f
truncate /f 176640
fsync /f
truncate /f 184559
fsync /f
truncate /f 192478
fsync /f
truncate /f 397
fsync /f
truncate /f 8316
fsync /f
truncate /f 16235
fsync /f
truncate /f 24154
fsync /f
truncate /f 32073
fsync /f
truncate /f 39992
fsync /f
truncate /f 47911
fsync /f
truncate /f 55830
fsync /f
truncate /f 63749
fsync /f
truncate /f 71668
fsync /f
truncate /f 79587
fsync /f
truncate /f 87506
fsync /f
truncate /f 95425
fsync /f
truncate /f 103344
fsync /f
truncate /f 111263
fsync /f
truncate /f 119182
fsync /f
sync
truncate /f 127101
fsync /f
truncate /f 135020
fsync /f
truncate /f 142939
fsync /f
truncate /f 150858
fsync /f
truncate /f 158777
fsync /f
truncate /f 166696
fsync /f
truncate /f 174615
fsync /f
truncate /f 182534
fsync /f
truncate /f 190453
fsync /f
truncate /f 198372
fsync /f
truncate /f 6291
fsync /f
truncate /f 14210
fsync /f
truncate /f 22129
fsync /f
truncate /f 30048
fsync /f
truncate /f 37967
fsync /f
truncate /f 45886
fsync /f
truncate /f 53805
fsync /f
truncate /f 61724
fsync /f
truncate /f 69643
fsync /f
truncate /f 77562
fsync /f
truncate /f 85481
fsync /f
truncate /f 93400
fsync /f
truncate /f 101319
fsync /f
truncate /f 109238
fsync /f
truncate /f 117157
fsync /f
truncate /f 125076
fsync /f
truncate /f 132995
fsync /f
truncate /f 140914
fsync /f
truncate /f 148833
fsync /f
truncate /f 156752
fsync /f
truncate /f 164671
fsync /f
truncate /f 172590
fsync /f
truncate /f 180509
fsync /f
truncate /f 188428
fsync /f
truncate /f 196347
fsync /f
truncate /f 4266
fsync /f
truncate /f 12185
fsync /f
truncate /f 20104
fsync /f
truncate /f 28023
fsync /f
truncate /f 35942
fsync /f
truncate /f 43861
fsync /f
truncate /f 51780
fsync /f
truncate /f 59699
fsync /f
truncate /f 67618
fsync /f
truncate /f 75537
fsync /f
truncate /f 83456
fsync /f
truncate /f 91375
fsync /f
truncate /f 99294
fsync /f
truncate /f 107213
fsync /f
truncate /f 115132
fsync /f
truncate /f 123051
fsync /f
truncate /f 130970
fsync /f
truncate /f 138889
fsync /f
truncate /f 146808
fsync /f
truncate /f 154727
fsync /f
truncate /f 162646
fsync /f
truncate /f 170565
fsync /f
truncate /f 178484
fsync /f
truncate /f 186403
fsync /f
truncate /f 194322
fsync /f
sync
truncate /f 2241
fsync /f
truncate /f 10160
fsync /f
truncate /f 18079
fsync /f
truncate /f 25998
fsync /f
truncate /f 33917
fsync /f
truncate /f 41836
fsync /f
truncate /f 49755
fsync /f
truncate /f 57674
fsync /f
truncate /f 65593
fsync /f
truncate /f 73512
fsync /f
truncate /f 81431
fsync /f
truncate /f 89350
fsync /f
truncate /f 97269
fsync /f
truncate /f 105188
fsync /f
truncate /f 113107
fsync /f
truncate /f 121026
fsync /f
truncate /f 128945
fsync /f
truncate /f 136864
fsync /f
truncate /f 144783
fsync /f
truncate /f 152702
fsync /f
truncate /f 160621
fsync /f
truncate /f 168540
fsync /f
truncate /f 176459
fsync /f
truncate /f 184378
fsync /f
truncate /f 192297
fsync /f
truncate /f 216
fsync /f
truncate /f 8135
fsync /f
truncate /f 16054
fsync /f
truncate /f 23973
fsync /f
truncate /f 31892
fsync /f
truncate /f 39811
fsync /f
truncate /f 47730
fsync /f
truncate /f 55649
fsync /f
truncate /f 63568
fsync /f
truncate /f 71487
fsync /f
truncate /f 79406
fsync /f
truncate /f 87325
fsync /f
truncate /f 95244
fsync /f
truncate /f 103163
fsync /f
truncate /f 111082
fsync /f
truncate /f 119001
fsync /f
truncate /f 126920
fsync /f
truncate /f 134839
fsync /f
truncate /f 142758
fsync /f
truncate /f 150677
fsync /f
truncate /f 158596
fsync /f
truncate /f 166515
fsync /f
truncate /f 174434
fsync /f
truncate /f 182353
fsync /f
truncate /f 190272
fsync /f
truncate /f 198191
fsync /f
truncate /f 6110
fsync /f
truncate /f 14029
fsync /f
truncate /f 21948
fsync /f
truncate /f 29867
fsync /f
truncate /f 37786
fsync /f
truncate /f 45705
fsync /f
truncate /f 53624
fsync /f
truncate /f 61543
fsync /f
truncate /f 69462
fsync /f
sync
truncate /f 77381
fsync /f
truncate /f 85300
fsync /f
truncate /f 93219
fsync /f
truncate /f 101138
fsync /f
truncate /f 109057
fsync /f
truncate /f 116976
fsync /f
truncate /f 124895
fsync /f
truncate /f 132814
fsync /f
truncate /f 140733
fsync /f
truncate /f 148652
fsync /f
truncate /f 156571
fsync /f
truncate /f 164490
fsync /f
truncate /f 172409
fsync /f
truncate /f 180328
fsync /f
truncate /f 188247
fsync /f
truncate /f 196166
fsync /f
truncate /f 4085
fsync /f
truncate /f 12004
fsync /f
truncate /f 19923
fsync /f
truncate /f 27842
fsync /f
truncate /f 35761
fsync /f
truncate /f 43680
fsync /f
truncate /f 51599
fsync /f
truncate /f 59518
fsync /f
truncate /f 67437
fsync /f
truncate /f 75356
fsync /f
truncate /f 83275
fsync /f
truncate /f 91194
fsync /f
truncate /f 99113
fsync /f
truncate /f 107032
fsync /f
truncate /f 114951
fsync /f
truncate /f 122870
fsync /f
truncate /f 130789
fsync /f
truncate /f 138708
fsync /f
truncate /f 146627
fsync /f
truncate /f 154546
fsync /f
truncate /f 162465
fsync /f
truncate /f 170384
fsync /f
truncate /f 178303
fsync /f
truncate /f 186222
fsync /f
truncate /f 194141
fsync /f
truncate /f 2060
fsync /f
truncate /f 9979
fsync /f
truncate /f 17898
fsync /f
truncate /f 25817
fsync /f
truncate /f 33736
fsync /f
truncate /f 41655
fsync /f
truncate /f 49574
fsync /f
truncate /f 57493
fsync /f
truncate /f 65412
fsync /f
truncate /f 73331
fsync /f
truncate /f 81250
fsync /f
truncate /f 89169
fsync /f
truncate /f 97088
fsync /f
truncate /f 105007
fsync /f
truncate /f 112926
fsync /f
truncate /f 120845
fsync /f
truncate /f 128764
fsync /f
truncate /f 136683
fsync /f
truncate /f 144602
fsync /f
sync
truncate /f 152521
fsync /f
truncate /f 160440
fsync /f
truncate /f 168359
fsync /f
truncate /f 176278
fsync /f
truncate /f 184197
fsync /f
truncate /f 192116
fsync /f
truncate /f 35
fsync /f
truncate /f 7954
fsync /f
truncate /f 15873
fsync /f
truncate /f 23792
fsync /f
truncate /f 31711
fsync /f
truncate /f 39630
fsync /f
truncate /f 47549
fsync /f
truncate /f 55468
fsync /f
truncate /f 63387
fsync /f
truncate /f 71306
fsync /f
truncate /f 79225
fsync /f
truncate /f 87144
fsync /f
truncate /f 95063
fsync /f
truncate /f 102982
fsync /f
truncate /f 110901
fsync /f
truncate /f 118820
fsync /f
truncate /f 126739
fsync /f
truncate /f 134658
fsync /f
truncate /f 142577
fsync /f
truncate /f 150496
fsync /f
truncate /f 158415
fsync /f
truncate /f 166334
fsync /f
truncate /f 174253
fsync /f
truncate /f 182172
fsync /f
truncate /f 190091
fsync /f
truncate /f 198010
fsync /f
truncate /f 5929
fsync /f
truncate /f 13848
fsync /f
truncate /f 21767
fsync /f
truncate /f 29686
fsync /f
truncate /f 37605
fsync /f
truncate /f 45524
fsync /f
truncate /f 53443
fsync /f
truncate /f 61362
fsync /f
truncate /f 69281
fsync /f
truncate /f 77200
fsync /f
truncate /f 85119
fsync /f
truncate /f 93038
fsync /f
truncate /f 100957
fsync /f
truncate /f 108876
fsync /f
truncate /f 116795
fsync /f
truncate /f 124714
fsync /f
truncate /f 132633
fsync /f
truncate /f 140552
fsync /f
truncate /f 148471
fsync /f
truncate /f 156390
fsync /f
truncate /f 164309
fsync /f
truncate /f 172228
fsync /f
truncate /f 180147
fsync /f
truncate /f 188066
fsync /f
truncate /f 195985
fsync /f
truncate /f 3904
fsync /f
truncate /f 11823
fsync /f
truncate /f 19742
fsync /f
sync
truncate /f 27661
fsync /f
truncate /f 35580
fsync /f
truncate /f 43499
fsync /f
truncate /f 51418
fsync /f
truncate /f 59337
fsync /f
truncate /f 67256
fsync /f
truncate /f 75175
fsync /f
truncate /f 83094
fsync /f
truncate /f 91013
fsync /f
truncate /f 98932
fsync /f
truncate /f 106851
fsync /f
truncate /f 114770
fsync /f
truncate /f 122689
fsync /f
truncate /f 130608
fsync /f
truncate /f 138527
fsync /f
truncate /f 146446
fsync /f
truncate /f 154365
fsync /f
truncate /f 162284
fsync /f
truncate /f 170203
fsync /f
truncate /f 178122
fsync /f
truncate /f 186041
fsync /f
truncate /f 193960
fsync /f
truncate /f 1879
fsync /f
truncate /f 9798
fsync /f
truncate /f 17717
fsync /f
truncate /f 25636
fsync /f
truncate /f 33555
fsync /f
truncate /f 41474
fsync /f
truncate /f 49393
fsync /f
truncate /f 57312
fsync /f
truncate /f 65231
fsync /f
truncate /f 73150
fsync /f
truncate /f 81069
fsync /f
truncate /f 88988
fsync /f
truncate /f 96907
fsync /f
truncate /f 104826
fsync /f
truncate /f 112745
fsync /f
truncate /f 120664
fsync /f
truncate /f 128583
fsync /f
truncate /f 136502
fsync /f
truncate /f 144421
fsync /f
truncate /f 152340
fsync /f
truncate /f 160259
fsync /f
truncate /f 168178
fsync /f
truncate /f 176097
fsync /f
truncate /f 184016
fsync /f
truncate /f 191935
fsync /f
truncate /f 199854
fsync /f
truncate /f 7773
fsync /f
truncate /f 15692
fsync /f
truncate /f 23611
fsync /f
truncate /f 31530
fsync /f
truncate /f 39449
fsync /f
truncate /f 47368
fsync /f
truncate /f 55287
fsync /f
truncate /f 63206
fsync /f
truncate /f 71125
fsync /f
truncate /f 79044
fsync /f
truncate /f 86963
fsync /f
truncate /f 94882
fsync /f
sync
truncate /f 102801
fsync /f
truncate /f 110720
fsync /f
truncate /f 118639
fsync /f
truncate /f 126558
fsync /f
truncate /f 134477
fsync /f
truncate /f 142396
fsync /f
truncate /f 150315
fsync /f
truncate /f 158234
fsync /f
truncate /f 166153
fsync /f
truncate /f 174072
fsync /f
truncate /f 181991
fsync /f
truncate /f 189910
fsync /f
truncate /f 197829
fsync /f
truncate /f 5748
fsync /f
truncate /f 13667
fsync /f
truncate /f 21586
fsync /f
truncate /f 29505
fsync /f
truncate /f 37424
fsync /f
truncate /f 45343
fsync /f
truncate /f 53262
fsync /f
truncate /f 61181
fsync /f
truncate /f 69100
fsync /f
truncate /f 77019
fsync /f
truncate /f 84938
fsync /f
truncate /f 92857
fsync /f
truncate /f 100776
fsync /f
truncate /f 108695
fsync /f
truncate /f 116614
fsync /f
truncate /f 124533
fsync /f
truncate /f 132452
fsync /f
truncate /f 140371
fsync /f
truncate /f 148290
fsync /f
truncate /f 156209
fsync /f
truncate /f 164128
fsync /f
truncate /f 172047
fsync /f
truncate /f 179966
fsync /f
truncate /f 187885
fsync /f
truncate /f 195804
fsync /f
truncate /f 3723
fsync /f
truncate /f 11642
fsync /f
truncate /f 19561
fsync /f
truncate /f 27480
fsync /f
truncate /f 35399
fsync /f
truncate /f 43318
fsync /f
truncate /f 51237
fsync /f
truncate /f 59156
fsync /f
truncate /f 67075
fsync /f
truncate /f 74994
fsync /f
truncate /f 82913
fsync /f
truncate /f 90832
fsync /f
truncate /f 98751
fsync /f
truncate /f 106670
fsync /f
truncate /f 114589
fsync /f
truncate /f 122508
fsync /f
truncate /f 130427
fsync /f
truncate /f 138346
fsync /f
truncate /f 146265
fsync /f
truncate /f 154184
fsync /f
truncate /f 162103
fsync /f
truncate /f 170022
fsync /f
sync
truncate /f 177941
fsync /f
truncate /f 185860
fsync /f
truncate /f 193779
fsync /f
truncate /f 1698
fsync /f
truncate /f 9617
fsync /f
truncate /f 17536
fsync /f
truncate /f 25455
fsync /f
truncate /f 33374
fsync /f
truncate /f 41293
fsync /f
truncate /f 49212
fsync /f
truncate /f 57131
fsync /f
truncate /f 65050
fsync /f
truncate /f 72969
fsync /f
truncate /f 80888
fsync /f
truncate /f 88807
fsync /f
truncate /f 96726
fsync /f
truncate /f 104645
fsync /f
truncate /f 112564
fsync /f
truncate /f 120483
fsync /f
truncate /f 128402
fsync /f
truncate /f 136321
fsync /f
truncate /f 144240
fsync /f
truncate /f 152159
fsync /f
truncate /f 160078
fsync /f
truncate /f 167997
fsync /f
truncate /f 175916
fsync /f
truncate /f 183835
fsync /f
truncate /f 191754
fsync /f
truncate /f 199673
fsync /f
truncate /f 7592
fsync /f
truncate /f 15511
fsync /f
truncate /f 23430
fsync /f
truncate /f 31349
fsync /f
truncate /f 39268
fsync /f
truncate /f 47187
fsync /f
truncate /f 55106
fsync /f
truncate /f 63025
fsync /f
truncate /f 70944
fsync /f
truncate /f 78863
fsync /f
truncate /f 86782
fsync /f
truncate /f 94701
fsync /f
truncate /f 102620
fsync /f
truncate /f 110539
fsync /f
truncate /f 118458
fsync /f
truncate /f 126377
fsync /f
truncate /f 134296
fsync /f
truncate /f 142215
fsync /f
truncate /f 150134
fsync /f
truncate /f 158053
fsync /f
truncate /f 165972
fsync /f
truncate /f 173891
fsync /f
truncate /f 181810
fsync /f
truncate /f 189729
fsync /f
truncate /f 197648
fsync /f
truncate /f 5567
fsync /f
truncate /f 13486
fsync /f
truncate /f 21405
fsync /f
truncate /f 29324
fsync /f
truncate /f 37243
fsync /f
truncate /f 45162
fsync /f
sync
truncate /f 53081
fsync /f
truncate /f 61000
fsync /f
truncate /f 68919
fsync /f
truncate /f 76838
fsync /f
truncate /f 84757
fsync /f
truncate /f 92676
fsync /f
truncate /f 100595
fsync /f
truncate /f 108514
fsync /f
truncate /f 116433
fsync /f
truncate /f 124352
fsync /f
truncate /f 132271
fsync /f
truncate /f 140190
fsync /f
truncate /f 148109
fsync /f
truncate /f 156028
fsync /f
truncate /f 163947
fsync /f
truncate /f 171866
fsync /f
truncate /f 179785
fsync /f
truncate /f 187704
fsync /f
truncate /f 195623
fsync /f
truncate /f 3542
fsync /f
truncate /f 11461
fsync /f
truncate /f 19380
fsync /f
truncate /f 27299
fsync /f
truncate /f 35218
fsync /f
truncate /f 43137
fsync /f
truncate /f 51056
fsync /f
truncate /f 58975
fsync /f
truncate /f 66894
fsync /f
truncate /f 74813
fsync /f
truncate /f 82732
fsync /f
truncate /f 90651
fsync /f
truncate /f 98570
fsync /f
truncate /f 106489
fsync /f
truncate /f 114408
fsync /f
truncate /f 122327
fsync /f
truncate /f 130246
fsync /f
truncate /f 138165
fsync /f
truncate /f 146084
fsync /f
truncate /f 154003
fsync /f
truncate /f 161922
fsync /f
truncate /f 169841
fsync /f
truncate /f 177760
fsync /f
truncate /f 185679
fsync /f
truncate /f 193598
fsync /f
truncate /f 1517
fsync /f
truncate /f 9436
fsync /f
truncate /f 17355
fsync /f
truncate /f 25274
fsync /f
truncate /f 33193
fsync /f
truncate /f 41112
fsync /f
truncate /f 49031
fsync /f
truncate /f 56950
fsync /f
truncate /f 64869
fsync /f
truncate /f 72788
fsync /f
truncate /f 80707
fsync /f
truncate /f 88626
fsync /f
truncate /f 96545
fsync /f
truncate /f 104464
fsync /f
truncate /f 112383
fsync /f
truncate /f 120302
fsync /f
sync
truncate /f 128221
fsync /f
truncate /f 136140
fsync /f
truncate /f 144059
fsync /f
truncate /f 151978
fsync /f
truncate /f 159897
fsync /f
truncate /f 167816
fsync /f
truncate /f 175735
fsync /f
truncate /f 183654
fsync /f
truncate /f 191573
fsync /f
truncate /f 199492
fsync /f
truncate /f 7411
fsync /f
truncate /f 15330
fsync /f
truncate /f 23249
fsync /f
truncate /f 31168
fsync /f
truncate /f 39087
fsync /f
truncate /f 47006
fsync /f
truncate /f 54925
fsync /f
truncate /f 62844
fsync /f
truncate /f 70763
fsync /f
truncate /f 78682
fsync /f
truncate /f 86601
fsync /f
truncate /f 94520
fsync /f
truncate /f 102439
fsync /f
truncate /f 110358
fsync /f
truncate /f 118277
fsync /f
truncate /f 126196
fsync /f
truncate /f 134115
fsync /f
truncate /f 142034
fsync /f
truncate /f 149953
fsync /f
truncate /f 157872
fsync /f
truncate /f 165791
fsync /f
truncate /f 173710
fsync /f
truncate /f 181629
fsync /f
truncate /f 189548
fsync /f
truncate /f 197467
fsync /f
truncate /f 5386
fsync /f
truncate /f 13305
fsync /f
truncate /f 21224
fsync /f
truncate /f 29143
fsync /f
truncate /f 37062
fsync /f
truncate /f 44981
fsync /f
truncate /f 52900
fsync /f
truncate /f 60819
fsync /f
truncate /f 68738
fsync /f
truncate /f 76657
fsync /f
truncate /f 84576
fsync /f
truncate /f 92495
fsync /f
truncate /f 100414
fsync /f
truncate /f 108333
fsync /f
truncate /f 116252
fsync /f
truncate /f 124171
fsync /f
truncate /f 132090
fsync /f
truncate /f 140009
fsync /f
truncate /f 147928
fsync /f
truncate /f 155847
fsync /f
truncate /f 163766
fsync /f
truncate /f 171685
fsync /f
truncate /f 179604
fsync /f
truncate /f 187523
fsync /f
truncate /f 195442
fsync /f
sync
truncate /f 3361
fsync /f
truncate /f 11280
fsync /f
truncate /f 19199
fsync /f
truncate /f 27118
fsync /f
truncate /f 35037
fsync /f
truncate /f 42956
fsync /f
truncate /f 50875
fsync /f
truncate /f 58794
fsync /f
truncate /f 66713
fsync /f
truncate /f 74632
fsync /f
truncate /f 82551
fsync /f
truncate /f 90470
fsync /f
truncate /f 98389
fsync /f
truncate /f 106308
fsync /f
truncate /f 114227
fsync /f
truncate /f 122146
fsync /f
truncate /f 130065
fsync /f
truncate /f 137984
fsync /f
truncate /f 145903
fsync /f
truncate /f 153822
fsync /f
truncate /f 161741
fsync /f
truncate /f 169660
fsync /f
truncate /f 177579
fsync /f
truncate /f 185498
fsync /f
truncate /f 193417
fsync /f
truncate /f 1336
fsync /f
truncate /f 9255
fsync /f
truncate /f 17174
fsync /f
truncate /f 25093
fsync /f
truncate /f 33012
fsync /f
truncate /f 40931
fsync /f
truncate /f 48850
fsync /f
truncate /f 56769
fsync /f
truncate /f 64688
fsync /f
truncate /f 72607
fsync /f
truncate /f 80526
fsync /f
truncate /f 88445
fsync /f
truncate /f 96364
fsync /f
truncate /f 104283
fsync /f
truncate /f 112202
fsync /f
truncate /f 120121
fsync /f
truncate /f 128040
fsync /f
truncate /f 135959
fsync /f
truncate /f 143878
fsync /f
truncate /f 151797
fsync /f
truncate /f 159716
fsync /f
truncate /f 167635
fsync /f
truncate /f 175554
fsync /f
truncate /f 183473
fsync /f
truncate /f 191392
fsync /f
truncate /f 199311
fsync /f
truncate /f 7230
fsync /f
truncate /f 15149
fsync /f
truncate /f 23068
fsync /f
truncate /f 30987
fsync /f
truncate /f 38906
fsync /f
truncate /f 46825
fsync /f
truncate /f 54744
fsync /f
truncate /f 62663
fsync /f
truncate /f 70582
fsync /f
sync
truncate /f 78501
fsync /f
truncate /f 86420
fsync /f
truncate /f 94339
fsync /f
truncate /f 102258
fsync /f
truncate /f 110177
fsync /f
truncate /f 118096
fsync /f
truncate /f 126015
fsync /f
truncate /f 133934
fsync /f
truncate /f 141853
fsync /f
truncate /f 149772
fsync /f
truncate /f 157691
fsync /f
truncate /f 165610
fsync /f
truncate /f 173529
fsync /f
truncate /f 181448
fsync /f
truncate /f 189367
fsync /f
truncate /f 197286
fsync /f
truncate /f 5205
fsync /f
truncate /f 13124
fsync /f
truncate /f 21043
fsync /f
truncate /f 28962
fsync /f
truncate /f 36881
fsync /f
truncate /f 44800
fsync /f
truncate /f 52719
fsync /f
truncate /f 60638
fsync /f
truncate /f 68557
fsync /f
truncate /f 76476
fsync /f
truncate /f 84395
fsync /f
truncate /f 92314
fsync /f
truncate /f 100233
fsync /f
truncate /f 108152
fsync /f
truncate /f 116071
fsync /f
truncate /f 123990
fsync /f
truncate /f 131909
fsync /f
truncate /f 139828
fsync /f
truncate /f 147747
fsync /f
truncate /f 155666
fsync /f
truncate /f 163585
fsync /f
truncate /f 171504
fsync /f
truncate /f 179423
fsync /f
truncate /f 187342
fsync /f
truncate /f 195261
fsync /f
truncate /f 3180
fsync /f
truncate /f 11099
fsync /f
truncate /f 19018
fsync /f
truncate /f 26937
fsync /f
truncate /f 34856
fsync /f
truncate /f 42775
fsync /f
truncate /f 50694
fsync /f
truncate /f 58613
fsync /f
truncate /f 66532
fsync /f
truncate /f 74451
fsync /f
truncate /f 82370
fsync /f
truncate /f 90289
fsync /f
truncate /f 98208
fsync /f
truncate /f 106127
fsync /f
truncate /f 114046
fsync /f
truncate /f 121965
fsync /f
truncate /f 129884
fsync /f
truncate /f 137803
fsync /f
truncate /f 145722
fsync /f
sync
truncate /f 153641
fsync /f
truncate /f 161560
fsync /f
truncate /f 169479
fsync /f
truncate /f 177398
fsync /f
truncate /f 185317
fsync /f
truncate /f 193236
fsync /f
truncate /f 1155
fsync /f
truncate /f 9074
fsync /f
truncate /f 16993
fsync /f
truncate /f 24912
fsync /f
truncate /f 32831
fsync /f
truncate /f 40750
fsync /f
truncate /f 48669
fsync /f
truncate /f 56588
fsync /f
truncate /f 64507
fsync /f
truncate /f 72426
fsync /f
truncate /f 80345
fsync /f
truncate /f 88264
fsync /f
truncate /f 96183
fsync /f
truncate /f 104102
fsync /f
truncate /f 112021
fsync /f
truncate /f 119940
fsync /f
truncate /f 127859
fsync /f
truncate /f 135778
fsync /f
truncate /f 143697
fsync /f
truncate /f 151616
fsync /f
truncate /f 159535
fsync /f
truncate /f 167454
fsync /f
truncate /f 175373
fsync /f
truncate /f 183292
fsync /f
truncate /f 191211
fsync /f
truncate /f 199130
fsync /f
truncate /f 7049
fsync /f
truncate /f 14968
fsync /f
truncate /f 22887
fsync /f
truncate /f 30806
fsync /f
truncate /f 38725
fsync /f
truncate /f 46644
fsync /f
truncate /f 54563
fsync /f
truncate /f 62482
fsync /f
truncate /f 70401
fsync /f
truncate /f 78320
fsync /f
truncate /f 86239
fsync /f
truncate /f 94158
fsync /f
truncate /f 102077
fsync /f
truncate /f 109996
fsync /f
truncate /f 117915
fsync /f
truncate /f 125834
fsync /f
truncate /f 133753
fsync /f
truncate /f 141672
fsync /f
truncate /f 149591
fsync /f
truncate /f 157510
fsync /f
truncate /f 165429
fsync /f
truncate /f 173348
fsync /f
truncate /f 181267
fsync /f
truncate /f 189186
fsync /f
truncate /f 197105
fsync /f
truncate /f 5024
fsync /f
truncate /f 12943
fsync /f
truncate /f 20862
fsync /f
sync
truncate /f 28781
fsync /f
truncate /f 36700
fsync /f
truncate /f 44619
fsync /f
truncate /f 52538
fsync /f
truncate /f 60457
fsync /f
truncate /f 68376
fsync /f
truncate /f 76295
fsync /f
truncate /f 84214
fsync /f
truncate /f 92133
fsync /f
truncate /f 100052
fsync /f
truncate /f 107971
fsync /f
truncate /f 115890
fsync /f
truncate /f 123809
fsync /f
truncate /f 131728
fsync /f
truncate /f 139647
fsync /f
truncate /f 147566
fsync /f
truncate /f 155485
fsync /f
truncate /f 163404
fsync /f
truncate /f 171323
fsync /f
truncate /f 179242
fsync /f
truncate /f 187161
fsync /f
truncate /f 195080
fsync /f
truncate /f 2999
fsync /f
truncate /f 10918
fsync /f
truncate /f 18837
fsync /f
truncate /f 26756
fsync /f
truncate /f 34675
fsync /f
truncate /f 42594
fsync /f
truncate /f 50513
fsync /f
truncate /f 58432
fsync /f
truncate /f 66351
fsync /f
truncate /f 74270
fsync /f
truncate /f 82189
fsync /f
truncate /f 90108
fsync /f
truncate /f 98027
fsync /f
truncate /f 105946
fsync /f
truncate /f 113865
fsync /f
truncate /f 121784
fsync /f
truncate /f 129703
fsync /f
truncate /f 137622
fsync /f
truncate /f 145541
fsync /f
truncate /f 153460
fsync /f
truncate /f 161379
fsync /f
truncate /f 169298
fsync /f
truncate /f 177217
fsync /f
truncate /f 185136
fsync /f
truncate /f 193055
fsync /f
truncate /f 974
fsync /f
truncate /f 8893
fsync /f
truncate /f 16812
fsync /f
truncate /f 24731
fsync /f
truncate /f 32650
fsync /f
truncate /f 40569
fsync /f
truncate /f 48488
fsync /f
truncate /f 56407
fsync /f
truncate /f 64326
fsync /f
truncate /f 72245
fsync /f
truncate /f 80164
fsync /f
truncate /f 88083
fsync /f
truncate /f 96002
fsync /f
sync
truncate /f 103921
fsync /f
truncate /f 111840
fsync /f
truncate /f 119759
fsync /f
truncate /f 127678
fsync /f
truncate /f 135597
fsync /f
truncate /f 143516
fsync /f
truncate /f 151435
fsync /f
truncate /f 159354
fsync /f
truncate /f 167273
fsync /f
truncate /f 175192
fsync /f
truncate /f 183111
fsync /f
truncate /f 191030
fsync /f
truncate /f 198949
fsync /f
truncate /f 6868
fsync /f
truncate /f 14787
fsync /f
truncate /f 22706
fsync /f
truncate /f 30625
fsync /f
truncate /f 38544
fsync /f
truncate /f 46463
fsync /f
truncate /f 54382
fsync /f
truncate /f 62301
fsync /f
truncate /f 70220
fsync /f
truncate /f 78139
fsync /f
truncate /f 86058
fsync /f
truncate /f 93977
fsync /f
truncate /f 101896
fsync /f
truncate /f 109815
fsync /f
truncate /f 117734
fsync /f
truncate /f 125653
fsync /f
truncate /f 133572
fsync /f
truncate /f 141491
fsync /f
truncate /f 149410
fsync /f
truncate /f 157329
fsync /f
truncate /f 165248
fsync /f
truncate /f 173167
fsync /f
truncate /f 181086
fsync /f
truncate /f 189005
fsync /f
truncate /f 196924
fsync /f
truncate /f 4843
fsync /f
truncate /f 12762
fsync /f
truncate /f 20681
fsync /f
truncate /f 28600
fsync /f
truncate /f 36519
fsync /f
truncate /f 44438
fsync /f
truncate /f 52357
fsync /f
truncate /f 60276
fsync /f
truncate /f 68195
fsync /f
truncate /f 76114
fsync /f
truncate /f 84033
fsync /f
truncate /f 91952
fsync /f
truncate /f 99871
fsync /f
truncate /f 107790
fsync /f
truncate /f 115709
fsync /f
truncate /f 123628
fsync /f
truncate /f 131547
fsync /f
truncate /f 139466
fsync /f
truncate /f 147385
fsync /f
truncate /f 155304
fsync /f
truncate /f 163223
fsync /f
truncate /f 171142
fsync /f
sync
truncate /f 179061
fsync /f
truncate /f 186980
fsync /f
truncate /f 194899
fsync /f
truncate /f 2818
fsync /f
truncate /f 10737
fsync /f
truncate /f 18656
fsync /f
truncate /f 26575
fsync /f
truncate /f 34494
fsync /f
truncate /f 42413
fsync /f
truncate /f 50332
fsync /f
truncate /f 58251
fsync /f
truncate /f 66170
fsync /f
truncate /f 74089
fsync /f
truncate /f 82008
fsync /f
truncate /f 89927
fsync /f
truncate /f 97846
fsync /f
truncate /f 105765
fsync /f
truncate /f 113684
fsync /f
truncate /f 121603
fsync /f
truncate /f 129522
fsync /f
truncate /f 137441
fsync /f
truncate /f 145360
fsync /f
truncate /f 153279
fsync /f
truncate /f 161198
fsync /f
truncate /f 169117
fsync /f
truncate /f 177036
fsync /f
truncate /f 184955
fsync /f
truncate /f 192874
fsync /f
truncate /f 793
fsync /f
truncate /f 8712
fsync /f
truncate /f 16631
fsync /f
truncate /f 24550
fsync /f
truncate /f 32469
fsync /f
truncate /f 40388
fsync /f
truncate /f 48307
fsync /f
truncate /f 56226
fsync /f
truncate /f 64145
fsync /f
truncate /f 72064
fsync /f
truncate /f 79983
fsync /f
truncate /f 87902
fsync /f
truncate /f 95821
fsync /f
truncate /f 103740
fsync /f
truncate /f 111659
fsync /f
truncate /f 119578
fsync /f
truncate /f 127497
fsync /f
truncate /f 135416
fsync /f
truncate /f 143335
fsync /f
truncate /f 151254
fsync /f
truncate /f 159173
fsync /f
truncate /f 167092
fsync /f
truncate /f 175011
fsync /f
truncate /f 182930
fsync /f
truncate /f 190849
fsync /f
truncate /f 198768
fsync /f
truncate /f 6687
fsync /f
truncate /f 14606
fsync /f
truncate /f 22525
fsync /f
truncate /f 30444
fsync /f
truncate /f 38363
fsync /f
truncate /f 46282
fsync /f
sync
truncate /f 54201
fsync /f
truncate /f 62120
fsync /f
truncate /f 70039
fsync /f
truncate /f 77958
fsync /f
truncate /f 85877
fsync /f
truncate /f 93796
fsync /f
truncate /f 101715
fsync /f
truncate /f 109634
fsync /f
truncate /f 117553
fsync /f
truncate /f 125472
fsync /f
truncate /f 133391
fsync /f
truncate /f 141310
fsync /f
truncate /f 149229
fsync /f
truncate /f 157148
fsync /f
truncate /f 165067
fsync /f
truncate /f 172986
fsync /f
truncate /f 180905
fsync /f
truncate /f 188824
fsync /f
truncate /f 196743
fsync /f
truncate /f 4662
fsync /f
truncate /f 12581
fsync /f
truncate /f 20500
fsync /f
truncate /f 28419
fsync /f
truncate /f 36338
fsync /f
truncate /f 44257
fsync /f
truncate /f 52176
fsync /f
truncate /f 60095
fsync /f
truncate /f 68014
fsync /f
truncate /f 75933
fsync /f
truncate /f 83852
fsync /f
truncate /f 91771
fsync /f
truncate /f 99690
fsync /f
truncate /f 107609
fsync /f
truncate /f 115528
fsync /f
truncate /f 123447
fsync /f
truncate /f 131366
fsync /f
truncate /f 139285
fsync /f
truncate /f 147204
fsync /f
truncate /f 155123
fsync /f
truncate /f 163042
fsync /f
truncate /f 170961
fsync /f
truncate /f 178880
fsync /f
truncate /f 186799
fsync /f
truncate /f 194718
fsync /f
truncate /f 2637
fsync /f
truncate /f 10556
fsync /f
truncate /f 18475
fsync /f
truncate /f 26394
fsync /f
truncate /f 34313
fsync /f
truncate /f 42232
fsync /f
truncate /f 50151
fsync /f
truncate /f 58070
fsync /f
truncate /f 65989
fsync /f
truncate /f 73908
fsync /f
truncate /f 81827
fsync /f
truncate /f 89746
fsync /f
truncate /f 97665
fsync /f
truncate /f 105584
fsync /f
truncate /f 113503
fsync /f
truncate /f 121422
fsync /f
sync
truncate /f 129341
fsync /f
truncate /f 137260
fsync /f
truncate /f 145179
fsync /f
truncate /f 153098
fsync /f
truncate /f 161017
fsync /f
truncate /f 168936
fsync /f
truncate /f 176855
fsync /f
truncate /f 184774
fsync /f
truncate /f 192693
fsync /f
truncate /f 612
fsync /f
truncate /f 8531
fsync /f
truncate /f 16450
fsync /f
truncate /f 24369
fsync /f
truncate /f 32288
fsync /f
truncate /f 40207
fsync /f
truncate /f 48126
fsync /f
truncate /f 56045
fsync /f
truncate /f 63964
fsync /f
truncate /f 71883
fsync /f
truncate /f 79802
fsync /f
truncate /f 87721
fsync /f
truncate /f 95640
fsync /f
truncate /f 103559
fsync /f
truncate /f 111478
fsync /f
truncate /f 119397
fsync /f
truncate /f 127316
fsync /f
truncate /f 135235
fsync /f
truncate /f 143154
fsync /f
truncate /f 151073
fsync /f
truncate /f 158992
fsync /f
truncate /f 166911
fsync /f
truncate /f 174830
fsync /f
truncate /f 182749
fsync /f
truncate /f 190668
fsync /f
truncate /f 198587
fsync /f
truncate /f 6506
fsync /f
truncate /f 14425
fsync /f
truncate /f 22344
fsync /f
truncate /f 30263
fsync /f
truncate /f 38182
fsync /f
truncate /f 123456
sync
truncate /g 1
fsync /g
truncate /g 7920
fsync /g
truncate /g 15839
fsync /g
truncate /g 23758
fsync /g
truncate /g 31677
fsync /g
truncate /g 39596
fsync /g
truncate /g 47515
fsync /g
truncate /g 55434
fsync /g
truncate /g 63353
fsync /g
truncate /g 71272
fsync /g
truncate /g 79191
fsync /g
truncate /g 87110
fsync /g
truncate /g 95029
fsync /g
truncate /g 102948
fsync /g
truncate /g 110867
fsync /g
truncate /g 118786
fsync /g
truncate /g 126705
fsync /g
truncate /g 134624
fsync /g
truncate /g 142543
fsync /g
truncate /g 150462
fsync /g
truncate /g 158381
fsync /g
truncate /g 166300
fsync /g
truncate /g 174219
fsync /g
truncate /g 182138
fsync /g
truncate /g 190057
fsync /g
truncate /g 197976
fsync /g
truncate /g 5895
fsync /g
truncate /g 13814
fsync /g
truncate /g 21733
fsync /g
truncate /g 29652
fsync /g
truncate /g 37571
fsync /g
truncate /g 45490
fsync /g
truncate /g 53409
fsync /g
truncate /g 61328
fsync /g
truncate /g 69247
fsync /g
truncate /g 77166
fsync /g
truncate /g 85085
fsync /g
truncate /g 93004
fsync /g
truncate /g 100923
fsync /g
truncate /g 108842
fsync /g
truncate /g 116761
fsync /g
truncate /g 124680
fsync /g
truncate /g 132599
fsync /g
truncate /g 140518
fsync /g
truncate /g 148437
fsync /g
truncate /g 156356
fsync /g
truncate /g 164275
fsync /g
truncate /g 172194
fsync /g
truncate /g 180113
fsync /g
truncate /g 188032
fsync /g
truncate /g 195951
fsync /g
truncate /g 3870
fsync /g
truncate /g 11789
fsync /g
truncate /g 19708
fsync /g
truncate /g 27627
fsync /g
truncate /g 35546
fsync /g
truncate /g 43465
fsync /g
truncate /g 51384
fsync /g
truncate /g 59303
fsync /g
truncate /g 67222
fsync /g
sync
truncate /g 75141
fsync /g
truncate /g 83060
fsync /g
truncate /g 90979
fsync /g
truncate /g 98898
fsync /g
truncate /g 106817
fsync /g
truncate /g 114736
fsync /g
truncate /g 122655
fsync /g
truncate /g 130574
fsync /g
truncate /g 138493
fsync /g
truncate /g 146412
fsync /g
truncate /g 154331
fsync /g
truncate /g 162250
fsync /g
truncate /g 170169
fsync /g
truncate /g 178088
fsync /g
truncate /g 186007
fsync /g
truncate /g 193926
fsync /g
truncate /g 1845
fsync /g
truncate /g 9764
fsync /g
truncate /g 17683
fsync /g
truncate /g 25602
fsync /g
truncate /g 33521
fsync /g
truncate /g 41440
fsync /g
truncate /g 49359
fsync /g
truncate /g 57278
fsync /g
truncate /g 65197
fsync /g
truncate /g 73116
fsync /g
truncate /g 81035
fsync /g
truncate /g 88954
fsync /g
truncate /g 96873
fsync /g
truncate /g 104792
fsync /g
truncate /g 112711
fsync /g
truncate /g 120630
fsync /g
truncate /g 128549
fsync /g
truncate /g 136468
fsync /g
truncate /g 144387
fsync /g
truncate /g 152306
fsync /g
truncate /g 160225
fsync /g
truncate /g 168144
fsync /g
truncate /g 176063
fsync /g
truncate /g 183982
fsync /g
truncate /g 191901
fsync /g
truncate /g 199820
fsync /g
truncate /g 7739
fsync /g
truncate /g 15658
fsync /g
truncate /g 23577
fsync /g
truncate /g 31496
fsync /g
truncate /g 39415
fsync /g
truncate /g 47334
fsync /g
truncate /g 55253
fsync /g
truncate /g 63172
fsync /g
truncate /g 71091
fsync /g
truncate /g 79010
fsync /g
truncate /g 86929
fsync /g
truncate /g 94848
fsync /g
truncate /g 102767
fsync /g
truncate /g 110686
fsync /g
truncate /g 118605
fsync /g
truncate /g 126524
fsync /g
truncate /g 134443
fsync /g
truncate /g 142362
fsync /g
sync
truncate /g 150281
fsync /g
truncate /g 158200
fsync /g
truncate /g 166119
fsync /g
truncate /g 174038
fsync /g
truncate /g 181957
fsync /g
truncate /g 189876
fsync /g
truncate /g 197795
fsync /g
truncate /g 5714
fsync /g
truncate /g 13633
fsync /g
truncate /g 21552
fsync /g
truncate /g 29471
fsync /g
truncate /g 37390
fsync /g
truncate /g 45309
fsync /g
truncate /g 53228
fsync /g
truncate /g 61147
fsync /g
truncate /g 69066
fsync /g
truncate /g 76985
fsync /g
truncate /g 84904
fsync /g
truncate /g 92823
fsync /g
truncate /g 100742
fsync /g
truncate /g 108661
fsync /g
truncate /g 116580
fsync /g
truncate /g 124499
fsync /g
truncate /g 132418
fsync /g
truncate /g 140337
fsync /g
truncate /g 148256
fsync /g
truncate /g 156175
fsync /g
truncate /g 164094
fsync /g
truncate /g 172013
fsync /g
truncate /g 179932
fsync /g
truncate /g 187851
fsync /g
truncate /g 195770
fsync /g
truncate /g 3689
fsync /g
truncate /g 11608
fsync /g
truncate /g 19527
fsync /g
truncate /g 27446
fsync /g
truncate /g 35365
fsync /g
truncate /g 43284
fsync /g
truncate /g 51203
fsync /g
truncate /g 59122
fsync /g
truncate /g 67041
fsync /g
truncate /g 74960
fsync /g
truncate /g 82879
fsync /g
truncate /g 90798
fsync /g
truncate /g 98717
fsync /g
truncate /g 106636
fsync /g
truncate /g 114555
fsync /g
truncate /g 122474
fsync /g
truncate /g 130393
fsync /g
truncate /g 138312
fsync /g
truncate /g 146231
fsync /g
truncate /g 154150
fsync /g
truncate /g 162069
fsync /g
truncate /g 169988
fsync /g
truncate /g 177907
fsync /g
truncate /g 185826
fsync /g
truncate /g 193745
fsync /g
truncate /g 1664
fsync /g
truncate /g 9583
fsync /g
truncate /g 17502
fsync /g
sync
truncate /g 25421
fsync /g
truncate /g 33340
fsync /g
truncate /g 41259
fsync /g
truncate /g 49178
fsync /g
truncate /g 57097
fsync /g
truncate /g 65016
fsync /g
truncate /g 72935
fsync /g
truncate /g 80854
fsync /g
truncate /g 88773
fsync /g
truncate /g 96692
fsync /g
truncate /g 104611
fsync /g
truncate /g 112530
fsync /g
truncate /g 120449
fsync /g
truncate /g 128368
fsync /g
truncate /g 136287
fsync /g
truncate /g 144206
fsync /g
truncate /g 152125
fsync /g
truncate /g 160044
fsync /g
truncate /g 167963
fsync /g
truncate /g 175882
fsync /g
truncate /g 183801
fsync /g
truncate /g 191720
fsync /g
truncate /g 199639
fsync /g
truncate /g 7558
fsync /g
truncate /g 15477
fsync /g
truncate /g 23396
fsync /g
truncate /g 31315
fsync /g
truncate /g 39234
fsync /g
truncate /g 47153
fsync /g
truncate /g 55072
fsync /g
truncate /g 62991
fsync /g
truncate /g 70910
fsync /g
truncate /g 78829
fsync /g
truncate /g 86748
fsync /g
truncate /g 94667
fsync /g
truncate /g 102586
fsync /g
truncate /g 110505
fsync /g
truncate /g 118424
fsync /g
truncate /g 126343
fsync /g
truncate /g 134262
fsync /g
truncate /g 142181
fsync /g
truncate /g 150100
fsync /g
truncate /g 158019
fsync /g
truncate /g 165938
fsync /g
truncate /g 173857
fsync /g
truncate /g 181776
fsync /g
truncate /g 189695
fsync /g
truncate /g 197614
fsync /g
truncate /g 5533
fsync /g
truncate /g 13452
fsync /g
truncate /g 21371
fsync /g
truncate /g 29290
fsync /g
truncate /g 37209
fsync /g
truncate /g 45128
fsync /g
truncate /g 53047
fsync /g
truncate /g 60966
fsync /g
truncate /g 68885
fsync /g
truncate /g 76804
fsync /g
truncate /g 84723
fsync /g
truncate /g 92642
fsync /g
sync
truncate /g 100561
fsync /g
truncate /g 108480
fsync /g
truncate /g 116399
fsync /g
truncate /g 124318
fsync /g
truncate /g 132237
fsync /g
truncate /g 140156
fsync /g
truncate /g 148075
fsync /g
truncate /g 155994
fsync /g
truncate /g 163913
fsync /g
truncate /g 171832
fsync /g
truncate /g 179751
fsync /g
truncate /g 187670
fsync /g
truncate /g 195589
fsync /g
truncate /g 3508
fsync /g
truncate /g 11427
fsync /g
truncate /g 19346
fsync /g
truncate /g 27265
fsync /g
truncate /g 35184
fsync /g
truncate /g 43103
fsync /g
truncate /g 51022
fsync /g
truncate /g 58941
fsync /g
truncate /g 66860
fsync /g
truncate /g 74779
fsync /g
truncate /g 82698
fsync /g
truncate /g 90617
fsync /g
truncate /g 98536
fsync /g
truncate /g 106455
fsync /g
truncate /g 114374
fsync /g
truncate /g 122293
fsync /g
truncate /g 130212
fsync /g
truncate /g 138131
fsync /g
truncate /g 146050
fsync /g
truncate /g 153969
fsync /g
truncate /g 161888
fsync /g
truncate /g 169807
fsync /g
truncate /g 177726
fsync /g
truncate /g 185645
fsync /g
truncate /g 193564
fsync /g
truncate /g 1483
fsync /g
truncate /g 9402
fsync /g
truncate /g 17321
fsync /g
truncate /g 25240
fsync /g
truncate /g 33159
fsync /g
truncate /g 41078
fsync /g
truncate /g 48997
fsync /g
truncate /g 56916
fsync /g
truncate /g 64835
fsync /g
truncate /g 72754
fsync /g
truncate /g 80673
fsync /g
truncate /g 88592
fsync /g
truncate /g 96511
fsync /g
truncate /g 104430
fsync /g
truncate /g 112349
fsync /g
truncate /g 120268
fsync /g
truncate /g 128187
fsync /g
truncate /g 136106
fsync /g
truncate /g 144025
fsync /g
truncate /g 151944
fsync /g
truncate /g 159863
fsync /g
truncate /g 167782
fsync /g
sync
truncate /g 175701
fsync /g
truncate /g 183620
fsync /g
truncate /g 191539
fsync /g
truncate /g 199458
fsync /g
truncate /g 7377
fsync /g
truncate /g 15296
fsync /g
truncate /g 23215
fsync /g
truncate /g 31134
fsync /g
truncate /g 39053
fsync /g
truncate /g 46972
fsync /g
truncate /g 54891
fsync /g
truncate /g 62810
fsync /g
truncate /g 70729
fsync /g
truncate /g 78648
fsync /g
truncate /g 86567
fsync /g
truncate /g 94486
fsync /g
truncate /g 102405
fsync /g
truncate /g 110324
fsync /g
truncate /g 118243
fsync /g
truncate /g 126162
fsync /g
truncate /g 134081
fsync /g
truncate /g 142000
fsync /g
truncate /g 149919
fsync /g
truncate /g 157838
fsync /g
truncate /g 165757
fsync /g
truncate /g 173676
fsync /g
truncate /g 181595
fsync /g
truncate /g 189514
fsync /g
truncate /g 197433
fsync /g
truncate /g 5352
fsync /g
truncate /g 13271
fsync /g
truncate /g 21190
fsync /g
truncate /g 29109
fsync /g
truncate /g 37028
fsync /g
truncate /g 44947
fsync /g
truncate /g 52866
fsync /g
truncate /g 60785
fsync /g
truncate /g 68704
fsync /g
truncate /g 76623
fsync /g
truncate /g 84542
fsync /g
truncate /g 92461
fsync /g
truncate /g 100380
fsync /g
truncate /g 108299
fsync /g
truncate /g 116218
fsync /g
truncate /g 124137
fsync /g
truncate /g 132056
fsync /g
truncate /g 139975
fsync /g
truncate /g 147894
fsync /g
truncate /g 155813
fsync /g
truncate /g 163732
fsync /g
truncate /g 171651
fsync /g
truncate /g 179570
fsync /g
truncate /g 187489
fsync /g
truncate /g 195408
fsync /g
truncate /g 3327
fsync /g
truncate /g 11246
fsync /g
truncate /g 19165
fsync /g
truncate /g 27084
fsync /g
truncate /g 35003
fsync /g
truncate /g 42922
fsync /g
sync
truncate /g 50841
fsync /g
truncate /g 58760
fsync /g
truncate /g 66679
fsync /g
truncate /g 74598
fsync /g
truncate /g 82517
fsync /g
truncate /g 90436
fsync /g
truncate /g 98355
fsync /g
truncate /g 106274
fsync /g
truncate /g 114193
fsync /g
truncate /g 122112
fsync /g
truncate /g 130031
fsync /g
truncate /g 137950
fsync /g
truncate /g 145869
fsync /g
truncate /g 153788
fsync /g
truncate /g 161707
fsync /g
truncate /g 169626
fsync /g
truncate /g 177545
fsync /g
truncate /g 185464
fsync /g
truncate /g 193383
fsync /g
truncate /g 1302
fsync /g
truncate /g 9221
fsync /g
truncate /g 17140
fsync /g
truncate /g 25059
fsync /g
truncate /g 32978
fsync /g
truncate /g 40897
fsync /g
truncate /g 48816
fsync /g
truncate /g 56735
fsync /g
truncate /g 64654
fsync /g
truncate /g 72573
fsync /g
truncate /g 80492
fsync /g
truncate /g 88411
fsync /g
truncate /g 96330
fsync /g
truncate /g 104249
fsync /g
truncate /g 112168
fsync /g
truncate /g 120087
fsync /g
truncate /g 128006
fsync /g
truncate /g 135925
fsync /g
truncate /g 143844
fsync /g
truncate /g 151763
fsync /g
truncate /g 159682
fsync /g
truncate /g 167601
fsync /g
truncate /g 175520
fsync /g
truncate /g 183439
fsync /g
truncate /g 191358
fsync /g
truncate /g 199277
fsync /g
truncate /g 7196
fsync /g
truncate /g 15115
fsync /g
truncate /g 23034
fsync /g
truncate /g 30953
fsync /g
truncate /g 38872
fsync /g
truncate /g 46791
fsync /g
truncate /g 54710
fsync /g
truncate /g 62629
fsync /g
truncate /g 70548
fsync /g
truncate /g 78467
fsync /g
truncate /g 86386
fsync /g
truncate /g 94305
fsync /g
truncate /g 102224
fsync /g
truncate /g 110143
fsync /g
truncate /g 118062
fsync /g
sync
truncate /g 125981
fsync /g
truncate /g 133900
fsync /g
truncate /g 141819
fsync /g
truncate /g 149738
fsync /g
truncate /g 157657
fsync /g
truncate /g 165576
fsync /g
truncate /g 173495
fsync /g
truncate /g 181414
fsync /g
truncate /g 189333
fsync /g
truncate /g 197252
fsync /g
truncate /g 5171
fsync /g
truncate /g 13090
fsync /g
truncate /g 21009
fsync /g
truncate /g 28928
fsync /g
truncate /g 36847
fsync /g
truncate /g 44766
fsync /g
truncate /g 52685
fsync /g
truncate /g 60604
fsync /g
truncate /g 68523
fsync /g
truncate /g 76442
fsync /g
truncate /g 84361
fsync /g
truncate /g 92280
fsync /g
truncate /g 100199
fsync /g
truncate /g 108118
fsync /g
truncate /g 116037
fsync /g
truncate /g 123956
fsync /g
truncate /g 131875
fsync /g
truncate /g 139794
fsync /g
truncate /g 147713
fsync /g
truncate /g 155632
fsync /g
truncate /g 163551
fsync /g
truncate /g 171470
fsync /g
truncate /g 179389
fsync /g
truncate /g 187308
fsync /g
truncate /g 195227
fsync /g
truncate /g 3146
fsync /g
truncate /g 11065
fsync /g
truncate /g 18984
fsync /g
truncate /g 26903
fsync /g
truncate /g 34822
fsync /g
truncate /g 42741
fsync /g
truncate /g 50660
fsync /g
truncate /g 58579
fsync /g
truncate /g 66498
fsync /g
truncate /g 74417
fsync /g
truncate /g 82336
fsync /g
truncate /g 90255
fsync /g
truncate /g 98174
fsync /g
truncate /g 106093
fsync /g
truncate /g 114012
fsync /g
truncate /g 121931
fsync /g
truncate /g 129850
fsync /g
truncate /g 137769
fsync /g
truncate /g 145688
fsync /g
truncate /g 153607
fsync /g
truncate /g 161526
fsync /g
truncate /g 169445
fsync /g
truncate /g 177364
fsync /g
truncate /g 185283
fsync /g
truncate /g 193202
fsync /g
sync
truncate /g 1121
fsync /g
truncate /g 9040
fsync /g
truncate /g 16959
fsync /g
truncate /g 24878
fsync /g
truncate /g 32797
fsync /g
truncate /g 40716
fsync /g
truncate /g 48635
fsync /g
truncate /g 56554
fsync /g
truncate /g 64473
fsync /g
truncate /g 72392
fsync /g
truncate /g 80311
fsync /g
truncate /g 88230
fsync /g
truncate /g 96149
fsync /g
truncate /g 104068
fsync /g
truncate /g 111987
fsync /g
truncate /g 119906
fsync /g
truncate /g 127825
fsync /g
truncate /g 135744
fsync /g
truncate /g 143663
fsync /g
truncate /g 151582
fsync /g
truncate /g 159501
fsync /g
truncate /g 167420
fsync /g
truncate /g 175339
fsync /g
truncate /g 183258
fsync /g
truncate /g 191177
fsync /g
truncate /g 199096
fsync /g
truncate /g 7015
fsync /g
truncate /g 14934
fsync /g
truncate /g 22853
fsync /g
truncate /g 30772
fsync /g
truncate /g 38691
fsync /g
truncate /g 46610
fsync /g
truncate /g 54529
fsync /g
truncate /g 62448
fsync /g
truncate /g 70367
fsync /g
truncate /g 78286
fsync /g
truncate /g 86205
fsync /g
truncate /g 94124
fsync /g
truncate /g 102043
fsync /g
truncate /g 109962
fsync /g
truncate /g 117881
fsync /g
truncate /g 125800
fsync /g
truncate /g 133719
fsync /g
truncate /g 141638
fsync /g
truncate /g 149557
fsync /g
truncate /g 157476
fsync /g
truncate /g 165395
fsync /g
truncate /g 173314
fsync /g
truncate /g 181233
fsync /g
truncate /g 189152
fsync /g
truncate /g 197071
fsync /g
truncate /g 4990
fsync /g
truncate /g 12909
fsync /g
truncate /g 20828
fsync /g
truncate /g 28747
fsync /g
truncate /g 36666
fsync /g
truncate /g 44585
fsync /g
truncate /g 52504
fsync /g
truncate /g 60423
fsync /g
truncate /g 68342
fsync /g
sync
truncate /g 76261
fsync /g
truncate /g 84180
fsync /g
truncate /g 92099
fsync /g
truncate /g 100018
fsync /g
truncate /g 107937
fsync /g
truncate /g 115856
fsync /g
truncate /g 123775
fsync /g
truncate /g 131694
fsync /g
truncate /g 139613
fsync /g
truncate /g 147532
fsync /g
truncate /g 155451
fsync /g
truncate /g 163370
fsync /g
truncate /g 171289
fsync /g
truncate /g 179208
fsync /g
truncate /g 187127
fsync /g
truncate /g 195046
fsync /g
truncate /g 2965
fsync /g
truncate /g 10884
fsync /g
truncate /g 18803
fsync /g
truncate /g 26722
fsync /g
truncate /g 34641
fsync /g
truncate /g 42560
fsync /g
truncate /g 50479
fsync /g
truncate /g 58398
fsync /g
truncate /g 66317
fsync /g
truncate /g 74236
fsync /g
truncate /g 82155
fsync /g
truncate /g 90074
fsync /g
truncate /g 97993
fsync /g
truncate /g 105912
fsync /g
truncate /g 113831
fsync /g
truncate /g 121750
fsync /g
truncate /g 129669
fsync /g
truncate /g 137588
fsync /g
truncate /g 145507
fsync /g
truncate /g 153426
fsync /g
truncate /g 161345
fsync /g
truncate /g 169264
fsync /g
truncate /g 177183
fsync /g
truncate /g 185102
fsync /g
truncate /g 193021
fsync /g
truncate /g 940
fsync /g
truncate /g 8859
fsync /g
truncate /g 16778
fsync /g
truncate /g 24697
fsync /g
truncate /g 32616
fsync /g
truncate /g 40535
fsync /g
truncate /g 48454
fsync /g
truncate /g 56373
fsync /g
truncate /g 64292
fsync /g
truncate /g 72211
fsync /g
truncate /g 80130
fsync /g
truncate /g 88049
fsync /g
truncate /g 95968
fsync /g
truncate /g 103887
fsync /g
truncate /g 111806
fsync /g
truncate /g 119725
fsync /g
truncate /g 127644
fsync /g
truncate /g 135563
fsync /g
truncate /g 143482
fsync /g
sync
truncate /g 151401
fsync /g
truncate /g 159320
fsync /g
truncate /g 167239
fsync /g
truncate /g 175158
fsync /g
truncate /g 183077
fsync /g
truncate /g 190996
fsync /g
truncate /g 198915
fsync /g
truncate /g 6834
fsync /g
truncate /g 14753
fsync /g
truncate /g 22672
fsync /g
truncate /g 30591
fsync /g
truncate /g 38510
fsync /g
truncate /g 46429
fsync /g
truncate /g 54348
fsync /g
truncate /g 62267
fsync /g
truncate /g 70186
fsync /g
truncate /g 78105
fsync /g
truncate /g 86024
fsync /g
truncate /g 93943
fsync /g
truncate /g 101862
fsync /g
truncate /g 109781
fsync /g
truncate /g 117700
fsync /g
truncate /g 125619
fsync /g
truncate /g 133538
fsync /g
truncate /g 141457
fsync /g
truncate /g 149376
fsync /g
truncate /g 157295
fsync /g
truncate /g 165214
fsync /g
truncate /g 173133
fsync /g
truncate /g 181052
fsync /g
truncate /g 188971
fsync /g
truncate /g 196890
fsync /g
truncate /g 4809
fsync /g
truncate /g 12728
fsync /g
truncate /g 20647
fsync /g
truncate /g 28566
fsync /g
truncate /g 36485
fsync /g
truncate /g 44404
fsync /g
truncate /g 52323
fsync /g
truncate /g 60242
fsync /g
truncate /g 68161
fsync /g
truncate /g 76080
fsync /g
truncate /g 83999
fsync /g
truncate /g 91918
fsync /g
truncate /g 99837
fsync /g
truncate /g 107756
fsync /g
truncate /g 115675
fsync /g
truncate /g 123594
fsync /g
truncate /g 131513
fsync /g
truncate /g 139432
fsync /g
truncate /g 147351
fsync /g
truncate /g 155270
fsync /g
truncate /g 163189
fsync /g
truncate /g 171108
fsync /g
truncate /g 179027
fsync /g
truncate /g 186946
fsync /g
truncate /g 194865
fsync /g
truncate /g 2784
fsync /g
truncate /g 10703
fsync /g
truncate /g 18622
fsync /g
sync
truncate /g 26541
fsync /g
truncate /g 34460
fsync /g
truncate /g 42379
fsync /g
truncate /g 50298
fsync /g
truncate /g 58217
fsync /g
truncate /g 66136
fsync /g
truncate /g 74055
fsync /g
truncate /g 81974
fsync /g
truncate /g 89893
fsync /g
truncate /g 97812
fsync /g
truncate /g 105731
fsync /g
truncate /g 113650
fsync /g
truncate /g 121569
fsync /g
truncate /g 129488
fsync /g
truncate /g 137407
fsync /g
truncate /g 145326
fsync /g
truncate /g 153245
fsync /g
truncate /g 161164
fsync /g
truncate /g 169083
fsync /g
truncate /g 177002
fsync /g
truncate /g 184921
fsync /g
truncate /g 192840
fsync /g
truncate /g 759
fsync /g
truncate /g 8678
fsync /g
truncate /g 16597
fsync /g
truncate /g 24516
fsync /g
truncate /g 32435
fsync /g
truncate /g 40354
fsync /g
truncate /g 48273
fsync /g
truncate /g 56192
fsync /g
truncate /g 64111
fsync /g
truncate /g 72030
fsync /g
truncate /g 79949
fsync /g
truncate /g 87868
fsync /g
truncate /g 95787
fsync /g
truncate /g 103706
fsync /g
truncate /g 111625
fsync /g
truncate /g 119544
fsync /g
truncate /g 127463
fsync /g
truncate /g 135382
fsync /g
truncate /g 143301
fsync /g
truncate /g 151220
fsync /g
truncate /g 159139
fsync /g
truncate /g 167058
fsync /g
truncate /g 174977
fsync /g
truncate /g 182896
fsync /g
truncate /g 190815
fsync /g
truncate /g 198734
fsync /g
truncate /g 6653
fsync /g
truncate /g 14572
fsync /g
truncate /g 22491
fsync /g
truncate /g 30410
fsync /g
truncate /g 38329
fsync /g
truncate /g 46248
fsync /g
truncate /g 54167
fsync /g
truncate /g 62086
fsync /g
truncate /g 70005
fsync /g
truncate /g 77924
fsync /g
truncate /g 85843
fsync /g
truncate /g 93762
fsync /g
sync
truncate /g 101681
fsync /g
truncate /g 109600
fsync /g
truncate /g 117519
fsync /g
truncate /g 125438
fsync /g
truncate /g 133357
fsync /g
truncate /g 141276
fsync /g
truncate /g 149195
fsync /g
truncate /g 157114
fsync /g
truncate /g 165033
fsync /g
truncate /g 172952
fsync /g
truncate /g 180871
fsync /g
truncate /g 188790
fsync /g
truncate /g 196709
fsync /g
truncate /g 4628
fsync /g
truncate /g 12547
fsync /g
truncate /g 20466
fsync /g
truncate /g 28385
fsync /g
truncate /g 36304
fsync /g
truncate /g 44223
fsync /g
truncate /g 52142
fsync /g
truncate /g 60061
fsync /g
truncate /g 67980
fsync /g
truncate /g 75899
fsync /g
truncate /g 83818
fsync /g
truncate /g 91737
fsync /g
truncate /g 99656
fsync /g
truncate /g 107575
fsync /g
truncate /g 115494
fsync /g
truncate /g 123413
fsync /g
truncate /g 131332
fsync /g
truncate /g 139251
fsync /g
truncate /g 147170
fsync /g
truncate /g 155089
fsync /g
truncate /g 163008
fsync /g
truncate /g 170927
fsync /g
truncate /g 178846
fsync /g
truncate /g 186765
fsync /g
truncate /g 194684
fsync /g
truncate /g 2603
fsync /g
truncate /g 10522
fsync /g
truncate /g 18441
fsync /g
truncate /g 26360
fsync /g
truncate /g 34279
fsync /g
truncate /g 42198
fsync /g
truncate /g 50117
fsync /g
truncate /g 58036
fsync /g
truncate /g 65955
fsync /g
truncate /g 73874
fsync /g
truncate /g 81793
fsync /g
truncate /g 89712
fsync /g
truncate /g 97631
fsync /g
truncate /g 105550
fsync /g
truncate /g 113469
fsync /g
truncate /g 121388
fsync /g
truncate /g 129307
fsync /g
truncate /g 137226
fsync /g
truncate /g 145145
fsync /g
truncate /g 153064
fsync /g
truncate /g 160983
fsync /g
truncate /g 168902
fsync /g
sync
truncate /g 176821
fsync /g
truncate /g 184740
fsync /g
truncate /g 192659
fsync /g
truncate /g 578
fsync /g
truncate /g 8497
fsync /g
truncate /g 16416
fsync /g
truncate /g 24335
fsync /g
truncate /g 32254
fsync /g
truncate /g 40173
fsync /g
truncate /g 48092
fsync /g
truncate /g 56011
fsync /g
truncate /g 63930
fsync /g
truncate /g 71849
fsync /g
truncate /g 79768
fsync /g
truncate /g 87687
fsync /g
truncate /g 95606
fsync /g
truncate /g 103525
fsync /g
truncate /g 111444
fsync /g
truncate /g 119363
fsync /g
truncate /g 127282
fsync /g
truncate /g 135201
fsync /g
truncate /g 143120
fsync /g
truncate /g 151039
fsync /g
truncate /g 158958
fsync /g
truncate /g 166877
fsync /g
truncate /g 174796
fsync /g
truncate /g 182715
fsync /g
truncate /g 190634
fsync /g
truncate /g 198553
fsync /g
truncate /g 6472
fsync /g
truncate /g 14391
fsync /g
truncate /g 22310
fsync /g
truncate /g 30229
fsync /g
truncate /g 38148
fsync /g
truncate /g 46067
fsync /g
truncate /g 53986
fsync /g
truncate /g 61905
fsync /g
truncate /g 69824
fsync /g
truncate /g 77743
fsync /g
truncate /g 85662
fsync /g
truncate /g 93581
fsync /g
truncate /g 101500
fsync /g
truncate /g 109419
fsync /g
truncate /g 117338
fsync /g
truncate /g 125257
fsync /g
truncate /g 133176
fsync /g
truncate /g 141095
fsync /g
truncate /g 149014
fsync /g
truncate /g 156933
fsync /g
truncate /g 164852
fsync /g
truncate /g 172771
fsync /g
truncate /g 180690
fsync /g
truncate /g 188609
fsync /g
truncate /g 196528
fsync /g
truncate /g 4447
fsync /g
truncate /g 12366
fsync /g
truncate /g 20285
fsync /g
truncate /g 28204
fsync /g
truncate /g 36123
fsync /g
truncate /g 44042
fsync /g
sync
truncate /g 51961
fsync /g
truncate /g 59880
fsync /g
truncate /g 67799
fsync /g
truncate /g 75718
fsync /g
truncate /g 83637
fsync /g
truncate /g 91556
fsync /g
truncate /g 99475
fsync /g
truncate /g 107394
fsync /g
truncate /g 115313
fsync /g
truncate /g 123232
fsync /g
truncate /g 131151
fsync /g
truncate /g 139070
fsync /g
truncate /g 146989
fsync /g
truncate /g 154908
fsync /g
truncate /g 162827
fsync /g
truncate /g 170746
fsync /g
truncate /g 178665
fsync /g
truncate /g 186584
fsync /g
truncate /g 194503
fsync /g
truncate /g 2422
fsync /g
truncate /g 10341
fsync /g
truncate /g 18260
fsync /g
truncate /g 26179
fsync /g
truncate /g 34098
fsync /g
truncate /g 42017
fsync /g
truncate /g 49936
fsync /g
truncate /g 57855
fsync /g
truncate /g 65774
fsync /g
truncate /g 73693
fsync /g
truncate /g 81612
fsync /g
truncate /g 89531
fsync /g
truncate /g 97450
fsync /g
truncate /g 105369
fsync /g
truncate /g 113288
fsync /g
truncate /g 121207
fsync /g
truncate /g 129126
fsync /g
truncate /g 137045
fsync /g
truncate /g 144964
fsync /g
truncate /g 152883
fsync /g
truncate /g 160802
fsync /g
truncate /g 168721
fsync /g
truncate /g 176640
fsync /g
truncate /g 184559
fsync /g
truncate /g 192478
fsync /g
truncate /g 397
fsync /g
truncate /g 8316
fsync /g
truncate /g 16235
fsync /g
truncate /g 24154
fsync /g
truncate /g 32073
fsync /g
truncate /g 39992
fsync /g
truncate /g 47911
fsync /g
truncate /g 55830
fsync /g
truncate /g 63749
fsync /g
truncate /g 71668
fsync /g
truncate /g 79587
fsync /g
truncate /g 87506
fsync /g
truncate /g 95425
fsync /g
truncate /g 103344
fsync /g
truncate /g 111263
fsync /g
truncate /g 119182
fsync /g
sync
truncate /g 127101
fsync /g
truncate /g 135020
fsync /g
truncate /g 142939
fsync /g
truncate /g 150858
fsync /g
truncate /g 158777
fsync /g
truncate /g 166696
fsync /g
truncate /g 174615
fsync /g
truncate /g 182534
fsync /g
truncate /g 190453
fsync /g
truncate /g 198372
fsync /g
truncate /g 6291
fsync /g
truncate /g 14210
fsync /g
truncate /g 22129
fsync /g
truncate /g 30048
fsync /g
truncate /g 37967
fsync /g
truncate /g 45886
fsync /g
truncate /g 53805
fsync /g
truncate /g 61724
fsync /g
truncate /g 69643
fsync /g
truncate /g 77562
fsync /g
truncate /g 85481
fsync /g
truncate /g 93400
fsync /g
truncate /g 101319
fsync /g
truncate /g 109238
fsync /g
truncate /g 117157
fsync /g
truncate /g 125076
fsync /g
truncate /g 132995
fsync /g
truncate /g 140914
fsync /g
truncate /g 148833
fsync /g
truncate /g 156752
fsync /g
truncate /g 164671
fsync /g
truncate /g 172590
fsync /g
truncate /g 180509
fsync /g
truncate /g 188428
fsync /g
truncate /g 196347
fsync /g
truncate /g 4266
fsync /g
truncate /g 12185
fsync /g
truncate /g 20104
fsync /g
truncate /g 28023
fsync /g
truncate /g 35942
fsync /g
truncate /g 43861
fsync /g
truncate /g 51780
fsync /g
truncate /g 59699
fsync /g
truncate /g 67618
fsync /g
truncate /g 75537
fsync /g
truncate /g 83456
fsync /g
truncate /g 91375
fsync /g
truncate /g 99294
fsync /g
truncate /g 107213
fsync /g
truncate /g 115132
fsync /g
truncate /g 123051
fsync /g
truncate /g 130970
fsync /g
truncate /g 138889
fsync /g
truncate /g 146808
fsync /g
truncate /g 154727
fsync /g
truncate /g 162646
fsync /g
truncate /g 170565
fsync /g
truncate /g 178484
fsync /g
truncate /g 186403
fsync /g
truncate /g 194322
fsync /g
sync
truncate /g 2241
fsync /g
truncate /g 10160
fsync /g
truncate /g 18079
fsync /g
truncate /g 25998
fsync /g
truncate /g 33917
fsync /g
truncate /g 41836
fsync /g
truncate /g 49755
fsync /g
truncate /g 57674
fsync /g
truncate /g 65593
fsync /g
truncate /g 73512
fsync /g
truncate /g 81431
fsync /g
truncate /g 89350
fsync /g
truncate /g 97269
fsync /g
truncate /g 105188
fsync /g
truncate /g 113107
fsync /g
truncate /g 121026
fsync /g
truncate /g 128945
fsync /g
truncate /g 136864
fsync /g
truncate /g 144783
fsync /g
truncate /g 152702
fsync /g
truncate /g 160621
fsync /g
truncate /g 168540
fsync /g
truncate /g 176459
fsync /g
truncate /g 184378
fsync /g
truncate /g 192297
fsync /g
truncate /g 216
fsync /g
truncate /g 8135
fsync /g
truncate /g 16054
fsync /g
truncate /g 23973
fsync /g
truncate /g 31892
fsync /g
truncate /g 39811
fsync /g
truncate /g 47730
fsync /g
truncate /g 55649
fsync /g
truncate /g 63568
fsync /g
truncate /g 71487
fsync /g
truncate /g 79406
fsync /g
truncate /g 87325
fsync /g
truncate /g 95244
fsync /g
truncate /g 103163
fsync /g
truncate /g 111082
fsync /g
truncate /g 119001
fsync /g
truncate /g 126920
fsync /g
truncate /g 134839
fsync /g
truncate /g 142758
fsync /g
truncate /g 150677
fsync /g
truncate /g 158596
fsync /g
truncate /g 166515
fsync /g
truncate /g 174434
fsync /g
truncate /g 182353
fsync /g
truncate /g 190272
fsync /g
truncate /g 198191
fsync /g
truncate /g 6110
fsync /g
truncate /g 14029
fsync /g
truncate /g 21948
fsync /g
truncate /g 29867
fsync /g
truncate /g 37786
fsync /g
truncate /g 45705
fsync /g
truncate /g 53624
fsync /g
truncate /g 61543
fsync /g
truncate /g 69462
fsync /g
sync
truncate /g 77381
fsync /g
truncate /g 85300
fsync /g
truncate /g 93219
fsync /g
truncate /g 101138
fsync /g
truncate /g 109057
fsync /g
truncate /g 116976
fsync /g
truncate /g 124895
fsync /g
truncate /g 132814
fsync /g
truncate /g 140733
fsync /g
truncate /g 148652
fsync /g
truncate /g 156571
fsync /g
truncate /g 164490
fsync /g
truncate /g 172409
fsync /g
truncate /g 180328
fsync /g
truncate /g 188247
fsync /g
truncate /g 196166
fsync /g
truncate /g 4085
fsync /g
truncate /g 12004
fsync /g
truncate /g 19923
fsync /g
truncate /g 27842
fsync /g
truncate /g 35761
fsync /g
truncate /g 43680
fsync /g
truncate /g 51599
fsync /g
truncate /g 59518
fsync /g
truncate /g 67437
fsync /g
truncate /g 75356
fsync /g
truncate /g 83275
fsync /g
truncate /g 91194
fsync /g
truncate /g 99113
fsync /g
truncate /g 107032
fsync /g
truncate /g 114951
fsync /g
truncate /g 122870
fsync /g
truncate /g 130789
fsync /g
truncate /g 138708
fsync /g
truncate /g 146627
fsync /g
truncate /g 154546
fsync /g
truncate /g 162465
fsync /g
truncate /g 170384
fsync /g
truncate /g 178303
fsync /g
truncate /g 186222
fsync /g
truncate /g 194141
fsync /g
truncate /g 2060
fsync /g
truncate /g 9979
fsync /g
truncate /g 17898
fsync /g
truncate /g 25817
fsync /g
truncate /g 33736
fsync /g
truncate /g 41655
fsync /g
truncate /g 49574
fsync /g
truncate /g 57493
fsync /g
truncate /g 65412
fsync /g
truncate /g 73331
fsync /g
truncate /g 81250
fsync /g
truncate /g 89169
fsync /g
truncate /g 97088
fsync /g
truncate /g 105007
fsync /g
truncate /g 112926
fsync /g
truncate /g 120845
fsync /g
truncate /g 128764
fsync /g
truncate /g 136683
fsync /g
truncate /g 144602
fsync /g
sync
truncate /g 152521
fsync /g
truncate /g 160440
fsync /g
truncate /g 168359
fsync /g
truncate /g 176278
fsync /g
truncate /g 184197
fsync /g
truncate /g 192116
fsync /g
truncate /g 35
fsync /g
truncate /g 7954
fsync /g
truncate /g 15873
fsync /g
truncate /g 23792
fsync /g
truncate /g 31711
fsync /g
truncate /g 39630
fsync /g
truncate /g 47549
fsync /g
truncate /g 55468
fsync /g
truncate /g 63387
fsync /g
truncate /g 71306
fsync /g
truncate /g 79225
fsync /g
truncate /g 87144
fsync /g
truncate /g 95063
fsync /g
truncate /g 102982
fsync /g
truncate /g 110901
fsync /g
truncate /g 118820
fsync /g
truncate /g 126739
fsync /g
truncate /g 134658
fsync /g
truncate /g 142577
fsync /g
truncate /g 150496
fsync /g
truncate /g 158415
fsync /g
truncate /g 166334
fsync /g
truncate /g 174253
fsync /g
truncate /g 182172
fsync /g
truncate /g 190091
fsync /g
truncate /g 198010
fsync /g
truncate /g 5929
fsync /g
truncate /g 13848
fsync /g
truncate /g 21767
fsync /g
truncate /g 29686
fsync /g
truncate /g 37605
fsync /g
truncate /g 45524
fsync /g
truncate /g 53443
fsync /g
truncate /g 61362
fsync /g
truncate /g 69281
fsync /g
truncate /g 77200
fsync /g
truncate /g 85119
fsync /g
truncate /g 93038
fsync /g
truncate /g 100957
fsync /g
truncate /g 108876
fsync /g
truncate /g 116795
fsync /g
truncate /g 124714
fsync /g
truncate /g 132633
fsync /g
truncate /g 140552
fsync /g
truncate /g 148471
fsync /g
truncate /g 156390
fsync /g
truncate /g 164309
fsync /g
truncate /g 172228
fsync /g
truncate /g 180147
fsync /g
truncate /g 188066
fsync /g
truncate /g 195985
fsync /g
truncate /g 3904
fsync /g
truncate /g 11823
fsync /g
truncate /g 19742
fsync /g
sync
truncate /g 27661
fsync /g
truncate /g 35580
fsync /g
truncate /g 43499
fsync /g
truncate /g 51418
fsync /g
truncate /g 59337
fsync /g
truncate /g 67256
fsync /g
truncate /g 75175
fsync /g
truncate /g 83094
fsync /g
truncate /g 91013
fsync /g
truncate /g 98932
fsync /g
truncate /g 106851
fsync /g
truncate /g 114770
fsync /g
truncate /g 122689
fsync /g
truncate /g 130608
fsync /g
truncate /g 138527
fsync /g
truncate /g 146446
fsync /g
truncate /g 154365
fsync /g
truncate /g 162284
fsync /g
truncate /g 170203
fsync /g
truncate /g 178122
fsync /g
truncate /g 186041
fsync /g
truncate /g 193960
fsync /g
truncate /g 1879
fsync /g
truncate /g 9798
fsync /g
truncate /g 17717
fsync /g
truncate /g 25636
fsync /g
truncate /g 33555
fsync /g
truncate /g 41474
fsync /g
truncate /g 49393
fsync /g
truncate /g 57312
fsync /g
truncate /g 65231
fsync /g
truncate /g 73150
fsync /g
truncate /g 81069
fsync /g
truncate /g 88988
fsync /g
truncate /g 96907
fsync /g
truncate /g 104826
fsync /g
truncate /g 112745
fsync /g
truncate /g 120664
fsync /g
truncate /g 128583
fsync /g
truncate /g 136502
fsync /g
truncate /g 144421
fsync /g
truncate /g 152340
fsync /g
truncate /g 160259
fsync /g
truncate /g 168178
fsync /g
truncate /g 176097
fsync /g
truncate /g 184016
fsync /g
truncate /g 191935
fsync /g
truncate /g 199854
fsync /g
truncate /g 7773
fsync /g
truncate /g 15692
fsync /g
truncate /g 23611
fsync /g
truncate /g 31530
fsync /g
truncate /g 39449
fsync /g
truncate /g 47368
fsync /g
truncate /g 55287
fsync /g
truncate /g 63206
fsync /g
truncate /g 71125
fsync /g
truncate /g 79044
fsync /g
truncate /g 86963
fsync /g
truncate /g 94882
fsync /g
sync
truncate /g 102801
fsync /g
truncate /g 110720
fsync /g
truncate /g 118639
fsync /g
truncate /g 126558
fsync /g
truncate /g 134477
fsync /g
truncate /g 142396
fsync /g
truncate /g 150315
fsync /g
truncate /g 158234
fsync /g
truncate /g 166153
fsync /g
truncate /g 174072
fsync /g
truncate /g 181991
fsync /g
truncate /g 189910
fsync /g
truncate /g 197829
fsync /g
truncate /g 5748
fsync /g
truncate /g 13667
fsync /g
truncate /g 21586
fsync /g
truncate /g 29505
fsync /g
truncate /g 37424
fsync /g
truncate /g 45343
fsync /g
truncate /g 53262
fsync /g
truncate /g 61181
fsync /g
truncate /g 69100
fsync /g
truncate /g 77019
fsync /g
truncate /g 84938
fsync /g
truncate /g 92857
fsync /g
truncate /g 100776
fsync /g
truncate /g 108695
fsync /g
truncate /g 116614
fsync /g
truncate /g 124533
fsync /g
truncate /g 132452
fsync /g
truncate /g 140371
fsync /g
truncate /g 148290
fsync /g
truncate /g 156209
fsync /g
truncate /g 164128
fsync /g
truncate /g 172047
fsync /g
truncate /g 179966
fsync /g
truncate /g 187885
fsync /g
truncate /g 195804
fsync /g
truncate /g 3723
fsync /g
truncate /g 11642
fsync /g
truncate /g 19561
fsync /g
truncate /g 27480
fsync /g
truncate /g 35399
fsync /g
truncate /g 43318
fsync /g
truncate /g 51237
fsync /g
truncate /g 59156
fsync /g
truncate /g 67075
fsync /g
truncate /g 74994
fsync /g
truncate /g 82913
fsync /g
truncate /g 90832
fsync /g
truncate /g 98751
fsync /g
truncate /g 106670
fsync /g
truncate /g 114589
fsync /g
truncate /g 122508
fsync /g
truncate /g 130427
fsync /g
truncate /g 138346
fsync /g
truncate /g 146265
fsync /g
truncate /g 154184
fsync /g
truncate /g 162103
fsync /g
truncate /g 170022
fsync /g
sync
truncate /g 177941
fsync /g
truncate /g 185860
fsync /g
truncate /g 193779
fsync /g
truncate /g 1698
fsync /g
truncate /g 9617
fsync /g
truncate /g 17536
fsync /g
truncate /g 25455
fsync /g
truncate /g 33374
fsync /g
truncate /g 41293
fsync /g
truncate /g 49212
fsync /g
truncate /g 57131
fsync /g
truncate /g 65050
fsync /g
truncate /g 72969
fsync /g
truncate /g 80888
fsync /g
truncate /g 88807
fsync /g
truncate /g 96726
fsync /g
truncate /g 104645
fsync /g
truncate /g 112564
fsync /g
truncate /g 120483
fsync /g
truncate /g 128402
fsync /g
truncate /g 136321
fsync /g
truncate /g 144240
fsync /g
truncate /g 152159
fsync /g
truncate /g 160078
fsync /g
truncate /g 167997
fsync /g
truncate /g 175916
fsync /g
truncate /g 183835
fsync /g
truncate /g 191754
fsync /g
truncate /g 199673
fsync /g
truncate /g 7592
fsync /g
truncate /g 15511
fsync /g
truncate /g 23430
fsync /g
truncate /g 31349
fsync /g
truncate /g 39268
fsync /g
truncate /g 47187
fsync /g
truncate /g 55106
fsync /g
truncate /g 63025
fsync /g
truncate /g 70944
fsync /g
truncate /g 78863
fsync /g
truncate /g 86782
fsync /g
truncate /g 94701
fsync /g
truncate /g 102620
fsync /g
truncate /g 110539
fsync /g
truncate /g 118458
fsync /g
truncate /g 126377
fsync /g
truncate /g 134296
fsync /g
truncate /g 142215
fsync /g
truncate /g 150134
fsync /g
truncate /g 158053
fsync /g
truncate /g 165972
fsync /g
truncate /g 173891
fsync /g
truncate /g 181810
fsync /g
truncate /g 189729
fsync /g
truncate /g 197648
fsync /g
truncate /g 5567
fsync /g
truncate /g 13486
fsync /g
truncate /g 21405
fsync /g
truncate /g 29324
fsync /g
truncate /g 37243
fsync /g
truncate /g 45162
fsync /g
sync
truncate /g 53081
fsync /g
truncate /g 61000
fsync /g
truncate /g 68919
fsync /g
truncate /g 76838
fsync /g
truncate /g 84757
fsync /g
truncate /g 92676
fsync /g
truncate /g 100595
fsync /g
truncate /g 108514
fsync /g
truncate /g 116433
fsync /g
truncate /g 124352
fsync /g
truncate /g 132271
fsync /g
truncate /g 140190
fsync /g
truncate /g 148109
fsync /g
truncate /g 156028
fsync /g
truncate /g 163947
fsync /g
truncate /g 171866
fsync /g
truncate /g 179785
fsync /g
truncate /g 187704
fsync /g
truncate /g 195623
fsync /g
truncate /g 3542
fsync /g
truncate /g 11461
fsync /g
truncate /g 19380
fsync /g
truncate /g 27299
fsync /g
truncate /g 35218
fsync /g
truncate /g 43137
fsync /g
truncate /g 51056
fsync /g
truncate /g 58975
fsync /g
truncate /g 66894
fsync /g
truncate /g 74813
fsync /g
truncate /g 82732
fsync /g
truncate /g 90651
fsync /g
truncate /g 98570
fsync /g
truncate /g 106489
fsync /g
truncate /g 114408
fsync /g
truncate /g 122327
fsync /g
truncate /g 130246
fsync /g
truncate /g 138165
fsync /g
truncate /g 146084
fsync /g
truncate /g 154003
fsync /g
truncate /g 161922
fsync /g
truncate /g 169841
fsync /g
truncate /g 177760
fsync /g
truncate /g 185679
fsync /g
truncate /g 193598
fsync /g
truncate /g 1517
fsync /g
truncate /g 9436
fsync /g
truncate /g 17355
fsync /g
truncate /g 25274
fsync /g
truncate /g 33193
fsync /g
truncate /g 41112
fsync /g
truncate /g 49031
fsync /g
truncate /g 56950
fsync /g
truncate /g 64869
fsync /g
truncate /g 72788
fsync /g
truncate /g 80707
fsync /g
truncate /g 88626
fsync /g
truncate /g 96545
fsync /g
truncate /g 104464
fsync /g
truncate /g 112383
fsync /g
truncate /g 120302
fsync /g
sync
truncate /g 128221
fsync /g
truncate /g 136140
fsync /g
truncate /g 144059
fsync /g
truncate /g 151978
fsync /g
truncate /g 159897
fsync /g
truncate /g 167816
fsync /g
truncate /g 175735
fsync /g
truncate /g 183654
fsync /g
truncate /g 191573
fsync /g
truncate /g 199492
fsync /g
truncate /g 7411
fsync /g
truncate /g 15330
fsync /g
truncate /g 23249
fsync /g
truncate /g 31168
fsync /g
truncate /g 39087
fsync /g
truncate /g 47006
fsync /g
truncate /g 54925
fsync /g
truncate /g 62844
fsync /g
truncate /g 70763
fsync /g
truncate /g 78682
fsync /g
truncate /g 86601
fsync /g
truncate /g 94520
fsync /g
truncate /g 102439
fsync /g
truncate /g 110358
fsync /g
truncate /g 118277
fsync /g
truncate /g 126196
fsync /g
truncate /g 134115
fsync /g
truncate /g 142034
fsync /g
truncate /g 149953
fsync /g
truncate /g 157872
fsync /g
truncate /g 165791
fsync /g
truncate /g 173710
fsync /g
truncate /g 181629
fsync /g
truncate /g 189548
fsync /g
truncate /g 197467
fsync /g
truncate /g 5386
fsync /g
truncate /g 13305
fsync /g
truncate /g 21224
fsync /g
truncate /g 29143
fsync /g
truncate /g 37062
fsync /g
truncate /g 44981
fsync /g
truncate /g 52900
fsync /g
truncate /g 60819
fsync /g
truncate /g 68738
fsync /g
truncate /g 76657
fsync /g
truncate /g 84576
fsync /g
truncate /g 92495
fsync /g
truncate /g 100414
fsync /g
truncate /g 108333
fsync /g
truncate /g 116252
fsync /g
truncate /g 124171
fsync /g
truncate /g 132090
fsync /g
truncate /g 140009
fsync /g
truncate /g 147928
fsync /g
truncate /g 155847
fsync /g
truncate /g 163766
fsync /g
truncate /g 171685
fsync /g
truncate /g 179604
fsync /g
truncate /g 187523
fsync /g
truncate /g 195442
fsync /g
sync
truncate /g 3361
fsync /g
truncate /g 11280
fsync /g
truncate /g 19199
fsync /g
truncate /g 27118
fsync /g
truncate /g 35037
fsync /g
truncate /g 42956
fsync /g
truncate /g 50875
fsync /g
truncate /g 58794
fsync /g
truncate /g 66713
fsync /g
truncate /g 74632
fsync /g
truncate /g 82551
fsync /g
truncate /g 90470
fsync /g
truncate /g 98389
fsync /g
truncate /g 106308
fsync /g
truncate /g 114227
fsync /g
truncate /g 122146
fsync /g
truncate /g 130065
fsync /g
truncate /g 137984
fsync /g
truncate /g 145903
fsync /g
truncate /g 153822
fsync /g
truncate /g 161741
fsync /g
truncate /g 169660
fsync /g
truncate /g 177579
fsync /g
truncate /g 185498
fsync /g
truncate /g 193417
fsync /g
truncate /g 1336
fsync /g
truncate /g 9255
fsync /g
truncate /g 17174
fsync /g
truncate /g 25093
fsync /g
truncate /g 33012
fsync /g
truncate /g 40931
fsync /g
truncate /g 48850
fsync /g
truncate /g 56769
fsync /g
truncate /g 64688
fsync /g
truncate /g 72607
fsync /g
truncate /g 80526
fsync /g
truncate /g 88445
fsync /g
truncate /g 96364
fsync /g
truncate /g 104283
fsync /g
truncate /g 112202
fsync /g
truncate /g 120121
fsync /g
truncate /g 128040
fsync /g
truncate /g 135959
fsync /g
truncate /g 143878
fsync /g
truncate /g 151797
fsync /g
truncate /g 159716
fsync /g
truncate /g 167635
fsync /g
truncate /g 175554
fsync /g
truncate /g 183473
fsync /g
truncate /g 191392
fsync /g
truncate /g 199311
fsync /g
truncate /g 7230
fsync /g
truncate /g 15149
fsync /g
truncate /g 23068
fsync /g
truncate /g 30987
fsync /g
truncate /g 38906
fsync /g
truncate /g 46825
fsync /g
truncate /g 54744
fsync /g
truncate /g 62663
fsync /g
truncate /g 70582
fsync /g
sync
truncate /g 78501
fsync /g
truncate /g 86420
fsync /g
truncate /g 94339
fsync /g
truncate /g 102258
fsync /g
truncate /g 110177
fsync /g
truncate /g 118096
fsync /g
truncate /g 126015
fsync /g
truncate /g 133934
fsync /g
truncate /g 141853
fsync /g
truncate /g 149772
fsync /g
truncate /g 157691
fsync /g
truncate /g 165610
fsync /g
truncate /g 173529
fsync /g
truncate /g 181448
fsync /g
truncate /g 189367
fsync /g
truncate /g 197286
fsync /g
truncate /g 5205
fsync /g
truncate /g 13124
fsync /g
truncate /g 21043
fsync /g
truncate /g 28962
fsync /g
truncate /g 36881
fsync /g
truncate /g 44800
fsync /g
truncate /g 52719
fsync /g
truncate /g 60638
fsync /g
truncate /g 68557
fsync /g
truncate /g 76476
fsync /g
truncate /g 84395
fsync /g
truncate /g 92314
fsync /g
truncate /g 100233
fsync /g
truncate /g 108152
fsync /g
truncate /g 116071
fsync /g
truncate /g 123990
fsync /g
truncate /g 131909
fsync /g
truncate /g 139828
fsync /g
truncate /g 147747
fsync /g
truncate /g 155666
fsync /g
truncate /g 163585
fsync /g
truncate /g 171504
fsync /g
truncate /g 179423
fsync /g
truncate /g 187342
fsync /g
truncate /g 195261
fsync /g
truncate /g 3180
fsync /g
truncate /g 11099
fsync /g
truncate /g 19018
fsync /g
truncate /g 26937
fsync /g
truncate /g 34856
fsync /g
truncate /g 42775
fsync /g
truncate /g 50694
fsync /g
truncate /g 58613
fsync /g
truncate /g 66532
fsync /g
truncate /g 74451
fsync /g
truncate /g 82370
fsync /g
truncate /g 90289
fsync /g
truncate /g 98208
fsync /g
truncate /g 106127
fsync /g
truncate /g 114046
fsync /g
truncate /g 121965
fsync /g
truncate /g 129884
fsync /g
truncate /g 137803
fsync /g
truncate /g 145722
fsync /g
sync
truncate /g 153641
fsync /g
truncate /g 161560
fsync /g
truncate /g 169479
fsync /g
truncate /g 177398
fsync /g
truncate /g 185317
fsync /g
truncate /g 193236
fsync /g
truncate /g 1155
fsync /g
truncate /g 9074
fsync /g
truncate /g 16993
fsync /g
truncate /g 24912
fsync /g
truncate /g 32831
fsync /g
truncate /g 40750
fsync /g
truncate /g 48669
fsync /g
truncate /g 56588
fsync /g
truncate /g 64507
fsync /g
truncate /g 72426
fsync /g
truncate /g 80345
fsync /g
truncate /g 88264
fsync /g
truncate /g 96183
fsync /g
truncate /g 104102
fsync /g
truncate /g 112021
fsync /g
truncate /g 119940
fsync /g
truncate /g 127859
fsync /g
truncate /g 135778
fsync /g
truncate /g 143697
fsync /g
truncate /g 151616
fsync /g
truncate /g 159535
fsync /g
truncate /g 167454
fsync /g
truncate /g 175373
fsync /g
truncate /g 183292
fsync /g
truncate /g 191211
fsync /g
truncate /g 199130
fsync /g
truncate /g 7049
fsync /g
truncate /g 14968
fsync /g
truncate /g 22887
fsync /g
truncate /g 30806
fsync /g
truncate /g 38725
fsync /g
truncate /g 46644
fsync /g
truncate /g 54563
fsync /g
truncate /g 62482
fsync /g
truncate /g 70401
fsync /g
truncate /g 78320
fsync /g
truncate /g 86239
fsync /g
truncate /g 94158
fsync /g
truncate /g 102077
fsync /g
truncate /g 109996
fsync /g
truncate /g 117915
fsync /g
truncate /g 125834
fsync /g
truncate /g 133753
fsync /g
truncate /g 141672
fsync /g
truncate /g 149591
fsync /g
truncate /g 157510
fsync /g
truncate /g 165429
fsync /g
truncate /g 173348
fsync /g
truncate /g 181267
fsync /g
truncate /g 189186
fsync /g
truncate /g 197105
fsync /g
truncate /g 5024
fsync /g
truncate /g 12943
fsync /g
truncate /g 20862
fsync /g
sync
truncate /g 28781
fsync /g
truncate /g 36700
fsync /g
truncate /g 44619
fsync /g
truncate /g 52538
fsync /g
truncate /g 60457
fsync /g
truncate /g 68376
fsync /g
truncate /g 76295
fsync /g
truncate /g 84214
fsync /g
truncate /g 92133
fsync /g
truncate /g 100052
fsync /g
truncate /g 107971
fsync /g
truncate /g 115890
fsync /g
truncate /g 123809
fsync /g
truncate /g 131728
fsync /g
truncate /g 139647
fsync /g
truncate /g 147566
fsync /g
truncate /g 155485
fsync /g
truncate /g 163404
fsync /g
truncate /g 171323
fsync /g
truncate /g 179242
fsync /g
truncate /g 187161
fsync /g
truncate /g 195080
fsync /g
truncate /g 2999
fsync /g
truncate /g 10918
fsync /g
truncate /g 18837
fsync /g
truncate /g 26756
fsync /g
truncate /g 34675
fsync /g
truncate /g 42594
fsync /g
truncate /g 50513
fsync /g
truncate /g 58432
fsync /g
truncate /g 66351
fsync /g
truncate /g 74270
fsync /g
truncate /g 82189
fsync /g
truncate /g 90108
fsync /g
truncate /g 98027
fsync /g
truncate /g 105946
fsync /g
truncate /g 113865
fsync /g
truncate /g 121784
fsync /g
truncate /g 129703
fsync /g
truncate /g 137622
fsync /g
truncate /g 145541
fsync /g
truncate /g 153460
fsync /g
truncate /g 161379
fsync /g
truncate /g 169298
fsync /g
truncate /g 177217
fsync /g
truncate /g 185136
fsync /g
truncate /g 193055
fsync /g
truncate /g 974
fsync /g
truncate /g 8893
fsync /g
truncate /g 16812
fsync /g
truncate /g 24731
fsync /g
truncate /g 32650
fsync /g
truncate /g 40569
fsync /g
truncate /g 48488
fsync /g
truncate /g 56407
fsync /g
truncate /g 64326
fsync /g
truncate /g 72245
fsync /g
truncate /g 80164
fsync /g
truncate /g 88083
fsync /g
truncate /g 96002
fsync /g
sync
truncate /g 103921
fsync /g
truncate /g 111840
fsync /g
truncate /g 119759
fsync /g
truncate /g 127678
fsync /g
truncate /g 135597
fsync /g
truncate /g 143516
fsync /g
truncate /g 151435
fsync /g
truncate /g 159354
fsync /g
truncate /g 167273
fsync /g
truncate /g 175192
fsync /g
truncate /g 183111
fsync /g
truncate /g 191030
fsync /g
truncate /g 198949
fsync /g
truncate /g 6868
fsync /g
truncate /g 14787
fsync /g
truncate /g 22706
fsync /g
truncate /g 30625
fsync /g
truncate /g 38544
fsync /g
truncate /g 46463
fsync /g
truncate /g 54382
fsync /g
truncate /g 62301
fsync /g
truncate /g 70220
fsync /g
truncate /g 78139
fsync /g
truncate /g 86058
fsync /g
truncate /g 93977
fsync /g
truncate /g 101896
fsync /g
truncate /g 109815
fsync /g
truncate /g 117734
fsync /g
truncate /g 125653
fsync /g
truncate /g 133572
fsync /g
truncate /g 141491
fsync /g
truncate /g 149410
fsync /g
truncate /g 157329
fsync /g
truncate /g 165248
fsync /g
truncate /g 173167
fsync /g
truncate /g 181086
fsync /g
truncate /g 189005
fsync /g
truncate /g 196924
fsync /g
truncate /g 4843
fsync /g
truncate /g 12762
fsync /g
truncate /g 20681
fsync /g
truncate /g 28600
fsync /g
truncate /g 36519
fsync /g
truncate /g 44438
fsync /g
truncate /g 52357
fsync /g
truncate /g 60276
fsync /g
truncate /g 68195
fsync /g
truncate /g 76114
fsync /g
truncate /g 84033
fsync /g
truncate /g 91952
fsync /g
truncate /g 99871
fsync /g
truncate /g 107790
fsync /g
truncate /g 115709
fsync /g
truncate /g 123628
fsync /g
truncate /g 131547
fsync /g
truncate /g 139466
fsync /g
truncate /g 147385
fsync /g
truncate /g 155304
fsync /g
truncate /g 163223
fsync /g
truncate /g 171142
fsync /g
sync
truncate /g 179061
fsync /g
truncate /g 186980
fsync /g
truncate /g 194899
fsync /g
truncate /g 2818
fsync /g
truncate /g 10737
fsync /g
truncate /g 18656
fsync /g
truncate /g 26575
fsync /g
truncate /g 34494
fsync /g
truncate /g 42413
fsync /g
truncate /g 50332
fsync /g
truncate /g 58251
fsync /g
truncate /g 66170
fsync /g
truncate /g 74089
fsync /g
truncate /g 82008
fsync /g
truncate /g 89927
fsync /g
truncate /g 97846
fsync /g
truncate /g 105765
fsync /g
truncate /g 113684
fsync /g
truncate /g 121603
fsync /g
truncate /g 129522
fsync /g
truncate /g 137441
fsync /g
truncate /g 145360
fsync /g
truncate /g 153279
fsync /g
truncate /g 161198
fsync /g
truncate /g 169117
fsync /g
truncate /g 177036
fsync /g
truncate /g 184955
fsync /g
truncate /g 192874
fsync /g
truncate /g 793
fsync /g
truncate /g 8712
fsync /g
truncate /g 16631
fsync /g
truncate /g 24550
fsync /g
truncate /g 32469
fsync /g
truncate /g 40388
fsync /g
truncate /g 48307
fsync /g
truncate /g 56226
fsync /g
truncate /g 64145
fsync /g
truncate /g 72064
fsync /g
truncate /g 79983
fsync /g
truncate /g 87902
fsync /g
truncate /g 95821
fsync /g
truncate /g 103740
fsync /g
truncate /g 111659
fsync /g
truncate /g 119578
fsync /g
truncate /g 127497
fsync /g
truncate /g 135416
fsync /g
truncate /g 143335
fsync /g
truncate /g 151254
fsync /g
truncate /g 159173
fsync /g
truncate /g 167092
fsync /g
truncate /g 175011
fsync /g
truncate /g 182930
fsync /g
truncate /g 190849
fsync /g
truncate /g 198768
fsync /g
truncate /g 6687
fsync /g
truncate /g 14606
fsync /g
truncate /g 22525
fsync /g
truncate /g 30444
fsync /g
truncate /g 38363
fsync /g
truncate /g 46282
fsync /g
sync
truncate /g 54201
fsync /g
truncate /g 62120
fsync /g
truncate /g 70039
fsync /g
truncate /g 77958
fsync /g
truncate /g 85877
fsync /g
truncate /g 93796
fsync /g
truncate /g 101715
fsync /g
truncate /g 109634
fsync /g
truncate /g 117553
fsync /g
truncate /g 125472
fsync /g
truncate /g 133391
fsync /g
truncate /g 141310
fsync /g
truncate /g 149229
fsync /g
truncate /g 157148
fsync /g
truncate /g 165067
fsync /g
truncate /g 172986
fsync /g
truncate /g 180905
fsync /g
truncate /g 188824
fsync /g
truncate /g 196743
fsync /g
truncate /g 4662
fsync /g
truncate /g 12581
fsync /g
truncate /g 20500
fsync /g
truncate /g 28419
fsync /g
truncate /g 36338
fsync /g
truncate /g 44257
fsync /g
truncate /g 52176
fsync /g
truncate /g 60095
fsync /g
truncate /g 68014
fsync /g
truncate /g 75933
fsync /g
truncate /g 83852
fsync /g
truncate /g 91771
fsync /g
truncate /g 99690
fsync /g
truncate /g 107609
fsync /g
truncate /g 115528
fsync /g
truncate /g 123447
fsync /g
truncate /g 131366
fsync /g
truncate /g 139285
fsync /g
truncate /g 147204
fsync /g
truncate /g 155123
fsync /g
truncate /g 163042
fsync /g
truncate /g 170961
fsync /g
truncate /g 178880
fsync /g
truncate /g 186799
fsync /g
truncate /g 194718
fsync /g
truncate /g 2637
fsync /g
truncate /g 10556
fsync /g
truncate /g 18475
fsync /g
truncate /g 26394
fsync /g
truncate /g 34313
fsync /g
truncate /g 42232
fsync /g
truncate /g 50151
fsync /g
truncate /g 58070
fsync /g
truncate /g 65989
fsync /g
truncate /g 73908
fsync /g
truncate /g 81827
fsync /g
truncate /g 89746
fsync /g
truncate /g 97665
fsync /g
truncate /g 105584
fsync /g
truncate /g 113503
fsync /g
truncate /g 121422
fsync /g
sync
truncate /g 129341
fsync /g
truncate /g 137260
fsync /g
truncate /g 145179
fsync /g
truncate /g 153098
fsync /g
truncate /g 161017
fsync /g
truncate /g 168936
fsync /g
truncate /g 176855
fsync /g
truncate /g 184774
fsync /g
truncate /g 192693
fsync /g
truncate /g 612
fsync /g
truncate /g 8531
fsync /g
truncate /g 16450
fsync /g
truncate /g 24369
fsync /g
truncate /g 32288
fsync /g
truncate /g 40207
fsync /g
truncate /g 48126
fsync /g
truncate /g 56045
fsync /g
truncate /g 63964
fsync /g
truncate /g 71883
fsync /g
truncate /g 79802
fsync /g
truncate /g 87721
fsync /g
truncate /g 95640
fsync /g
truncate /g 103559
fsync /g
truncate /g 111478
fsync /g
truncate /g 119397
fsync /g
truncate /g 127316
fsync /g
truncate /g 135235
fsync /g
truncate /g 143154
fsync /g
truncate /g 151073
fsync /g
truncate /g 158992
fsync /g
truncate /g 166911
fsync /g
truncate /g 174830
fsync /g
truncate /g 182749
fsync /g
truncate /g 190668
fsync /g
truncate /g 198587
fsync /g
truncate /g 6506
fsync /g
truncate /g 14425
fsync /g
truncate /g 22344
fsync /g
truncate /g 30263
fsync /g
truncate /g 38182
fsync /g
truncate /g 123456
sync


By2_gapJleeeJe
2kKK-ſ-xK2K-S-Éxk2	K-ſ-xK2k-t-xk2-s-xk2
k-s-ééxk2k-s-x2kk-s-xk2kS2Kſ2ktBx
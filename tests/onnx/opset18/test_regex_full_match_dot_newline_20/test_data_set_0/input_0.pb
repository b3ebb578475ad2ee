2abc2a
c2ac2a.c2abccBx
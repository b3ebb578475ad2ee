
By_glpJÑ[X[
[q[äZe[¡Zk[§[:[ˆZ’[
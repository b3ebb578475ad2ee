
By2_glpJqÕpÁpþp
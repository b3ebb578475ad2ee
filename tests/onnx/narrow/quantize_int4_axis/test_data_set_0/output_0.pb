ByJ7çb≤èww

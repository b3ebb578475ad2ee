
BuJ
ZdVÒ5Œýïf
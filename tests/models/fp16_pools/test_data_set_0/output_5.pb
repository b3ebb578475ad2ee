
By_gmpJcGêHoF´FÞG|HŸEsF¦GDGGªG
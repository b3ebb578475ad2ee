
ByJ<¨tït¨×Y×¨tŽÃkÃŽ Ë ŽÃ¨tït¨×Y×¨t2s2V	V2¨tït¨×Y×¨tŽÃkÃŽ Ë ŽÃ
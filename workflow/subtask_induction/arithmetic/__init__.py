"""Arithmetic experiments (paper §4, App. B): GPT-2 on `a b SEP c` with c = f(a, b) mod 7."""

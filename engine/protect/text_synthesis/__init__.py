"""Synthesis of the text itself (Ororbia, Linder & Snoke): the ε-differentially private Multinomial–Dirichlet
synthesizer of each author's words and the user-conditioned recurrent generator."""

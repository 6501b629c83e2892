"""Synthesis of structured fields given the text (Schneider, Hu, Mankad & Bale 2023): the sequential scheme, the shrinkage GLM and CART."""

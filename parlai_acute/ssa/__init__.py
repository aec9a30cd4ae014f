"""Sensibleness and Specificity Average (Meena, Adiwardana et al. 2020): labels table,
items to label (static contexts, logs), analysis with honest intervals, report."""

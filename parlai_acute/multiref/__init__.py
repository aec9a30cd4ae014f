"""Multi-reference collection (Gupta et al. 2019): analysis of the collected references."""

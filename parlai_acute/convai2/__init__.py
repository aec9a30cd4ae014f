"""ConvAI2's human evaluation (Dinan et al. 2019): end-of-chat Likert ratings, persona
detection, and Bayesian calibration of annotator bias (Kulikov et al. 2018)."""

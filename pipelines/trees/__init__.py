"""Constituency trees (§6.3): reading bracket files and WSJ sections,
normalisation, the linearization and its repairing inverse (in Python and in
TensorFlow ops), trees as a corpus, and the baselines.
"""

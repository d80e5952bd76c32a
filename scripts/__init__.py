"""Maintenance scripts of the repository (not installed with the package).

A regular package, so that ``scripts.corpora`` is found here before any other
top-level ``scripts`` on ``sys.path``.
"""

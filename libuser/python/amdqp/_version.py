# SPDX-License-Identifier: MIT
# Kept equal to the repository's VERSION file (a test checks it).
__version__ = "0.1.0"

"""level2.py - KernelBench level 2 (100 fusions) as leap tasks, composed of level-1 operators."""


def tasks():
    return []

"""Benchmarks of bobshat: throughput (``benchmarks.throughput``, ``bobshat bench``).

Benchmarks report measurements; they never assert timings (tests do not time
anything).
"""

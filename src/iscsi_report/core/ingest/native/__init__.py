"""Compiled fast paths of the parsers, loaded with ctypes; each has a numpy reference it must equal."""

"""Toy compression codecs: run-length encoding, an LZ77-style codec and an Adler-32 checksum."""

from squash.lz import lz_compress, lz_decompress
from squash.rle import adler32, rle_decode, rle_encode, runs

__all__ = ["adler32", "lz_compress", "lz_decompress", "rle_decode", "rle_encode", "runs"]

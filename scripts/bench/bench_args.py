"""Command-line options the benchmark scripts share the form of."""
import argparse


def int_options(parser=None, **defaults):
    """`parser` (a new one when None) with an integer option `--name` for each keyword,
    defaulting to its value, in the order given."""
    parser = parser or argparse.ArgumentParser()
    for name, default in defaults.items():
        parser.add_argument("--" + name, type=int, default=default)
    return parser

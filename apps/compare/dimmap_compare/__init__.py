"""dimmap-compare: runs the papers' experiments across placements on equal memory budgets and
writes tables, results files (CSV, JSON, HDF5) and plots."""

VERSION = "0.1.0"
SCHEMA = "dimmap-compare/1"

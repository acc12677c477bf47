"""reportgen: a storage report from a CSV listing of files."""

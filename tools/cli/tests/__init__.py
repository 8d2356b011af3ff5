"""The CLI's own tests: python3 -m unittest discover -s tests -t tools/cli."""

"""The `toroid` command line (docs/cli.md): one module per command."""

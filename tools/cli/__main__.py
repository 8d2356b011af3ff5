"""`python3 tools/cli ARGS` runs the CLI: the ./toroid launcher's way in, with
this directory as the only path to the package (python3 -I)."""
import sys

from toroid_cli.main import main

sys.exit(main())

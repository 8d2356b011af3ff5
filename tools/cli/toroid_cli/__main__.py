"""python3 -m toroid_cli (with tools/cli on the path) runs the CLI."""
import sys

from toroid_cli.main import main

sys.exit(main())

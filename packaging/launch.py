"""PyInstaller entry script: the frozen executable runs trinity_desktop.__main__.main()."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()
    from trinity_desktop.__main__ import main

    sys.exit(main())

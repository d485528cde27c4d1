import sys

from ..lifeline import watch

watch()  # before anything else: this process (and what it starts) dies with its parent

if len(sys.argv) > 1 and sys.argv[1] in ("compare", "sweep", "serve", "command", "calibrate"):
    if sys.argv[1] == "command":
        from .command import main as command_main
    elif sys.argv[1] == "calibrate":
        from .calibrate import main as command_main
    elif sys.argv[1] == "compare":
        from .compare import main as command_main
    elif sys.argv[1] == "sweep":
        from .sweep import main as command_main
    else:
        from .serve import main as command_main
    sys.exit(command_main(sys.argv[2:]))

from .harness import main

sys.exit(main())

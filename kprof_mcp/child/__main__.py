import sys

if len(sys.argv) > 1 and sys.argv[1] == "compare":
    from .compare import main as compare_main

    sys.exit(compare_main(sys.argv[2:]))

from .harness import main

sys.exit(main())

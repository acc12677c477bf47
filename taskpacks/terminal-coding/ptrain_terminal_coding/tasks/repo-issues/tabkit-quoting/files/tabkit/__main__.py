from tabkit.cli import main

raise SystemExit(main())

from verkit.cli import main

raise SystemExit(main())

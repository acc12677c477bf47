from logstat.cli import main

raise SystemExit(main())

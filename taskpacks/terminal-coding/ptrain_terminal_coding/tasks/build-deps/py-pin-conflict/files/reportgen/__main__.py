from reportgen.report import main

raise SystemExit(main())

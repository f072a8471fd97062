from tracebox.cli import main

raise SystemExit(main())

"""Write the architecture diagrams into a folder: ``python scripts/diagrams.py book/figures``
(:mod:`book_build.diagrams`)."""

from book_build.diagrams import main

if __name__ == "__main__":
    raise SystemExit(main())

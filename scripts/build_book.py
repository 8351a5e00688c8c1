"""``make book``: build the book strictly (:mod:`book_build.build`)."""

from book_build.build import main

if __name__ == "__main__":
    raise SystemExit(main())
